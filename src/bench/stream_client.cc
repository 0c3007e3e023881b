#include "bench/stream_client.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>
#include <string_view>

#include "base/clock.h"
#include "base/enum_names.h"
#include "bench/output_match.h"
#include "bench/spec_report.h"
#include "bench/token_space.h"
#include "client/openai_http.h"

namespace pg::bench {
namespace {

using nlohmann::json;

constexpr const char* kPromptModeNames[] = {"tokens", "text", "chat"};  // by PromptMode

int64_t IntOr(const json& j, const char* key, int64_t dflt) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return dflt;
  return j[key].get<int64_t>();
}

std::string OneLine(std::string s, size_t max = 200) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// Per-stream state while chunks arrive.
struct StreamState {
  double t0 = 0;
  double last = 0;
  bool done = false;
  bool failed = false;
  std::string error;
  std::string text;  // the streamed output, for RequestRecord::output_hash
};

// A choice's output: the text (completions) or the delta's content and
// reasoning (chat); the first output chunk sets TTFT, the later ones ITL.
void ReadChoice(const json& c, bool chat, bool has_usage, double now, StreamState* st, RequestRecord* rec) {
  const bool finished = c.contains("finish_reason") && c["finish_reason"].is_string();
  if (finished) rec->finish_reason = c["finish_reason"].get<std::string>();
  bool output = false;
  if (!chat) {
    if (c.contains("text") && c["text"].is_string()) {
      const std::string& text = c["text"].get_ref<const std::string&>();
      output = !text.empty() || (!finished && !has_usage);
      st->text += text;
    }
  } else if (c.contains("delta") && c["delta"].is_object()) {
    const json& d = c["delta"];
    for (const char* key : {"content", "reasoning_content"}) {
      if (!d.contains(key) || !d[key].is_string()) continue;
      const std::string& text = d[key].get_ref<const std::string&>();
      if (!text.empty()) output = true;
      if (std::string_view(key) == "content") st->text += text;
    }
  }
  if (!output) return;
  if (rec->output_chunks == 0) {
    rec->ttft_s = now - st->t0;
  } else {
    rec->itl_s.push_back(now - st->last);
  }
  st->last = now;
  ++rec->output_chunks;
}

// The usage chunk: token counts, the cached tokens and their tiers.
void ReadUsage(const json& u, RequestRecord* rec) {
  ReadSpecUsage(u, rec);
  rec->prompt_tokens = IntOr(u, "prompt_tokens", rec->prompt_tokens);
  int64_t completion = IntOr(u, "completion_tokens", -1);
  if (completion >= 0) {
    rec->output_tokens = completion;
    rec->output_from_usage = true;
  }
  if (!u.contains("prompt_tokens_details") || !u["prompt_tokens_details"].is_object()) return;
  const json& d = u["prompt_tokens_details"];
  int64_t cached = IntOr(d, "cached_tokens", -1);
  if (cached >= 0) {
    rec->cached_tokens = cached;
    rec->cached_source = "usage";
  }
  if (d.contains("cached_tokens_by_tier") && d["cached_tokens_by_tier"].is_object()) {
    const json& t = d["cached_tokens_by_tier"];
    rec->cached_device = IntOr(t, "device", -1);
    rec->cached_host = IntOr(t, "host", -1);
    rec->cached_disk = IntOr(t, "disk", -1);
    rec->cached_remote = IntOr(t, "remote", -1);
  }
}

// llama.cpp-style timings: cache_n / prompt_n when usage did not say.
void ReadTimings(const json& t, RequestRecord* rec) {
  ReadSpecTimings(t, rec);
  int64_t cache_n = IntOr(t, "cache_n", -1);
  int64_t prompt_n = IntOr(t, "prompt_n", -1);
  if (cache_n >= 0 && rec->cached_source != "usage") {
    rec->cached_tokens = cache_n;
    rec->cached_source = "timings";
  }
  if (rec->prompt_tokens < 0 && cache_n >= 0 && prompt_n >= 0) rec->prompt_tokens = cache_n + prompt_n;
}

// One server-sent event's data.
void ReadStreamEvent(const std::string& data, bool chat, StreamState* st, RequestRecord* rec) {
  if (data == "[DONE]") {
    st->done = true;
    return;
  }
  json j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    st->failed = true;
    st->error = "unparsable stream event: " + OneLine(data, 120);
    return;
  }
  if (j.contains("error")) {
    st->failed = true;
    const json& e = j["error"];
    st->error = "server error event: " + OneLine(e.is_object() && e.contains("message") && e["message"].is_string()
                                                     ? e["message"].get<std::string>()
                                                     : e.dump());
    return;
  }
  const double now = NowSeconds();
  const bool has_usage = j.contains("usage") && j["usage"].is_object();
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() && j["choices"][0].is_object())
    ReadChoice(j["choices"][0], chat, has_usage, now, st, rec);
  if (has_usage) ReadUsage(j["usage"], rec);
  if (j.contains("timings") && j["timings"].is_object()) ReadTimings(j["timings"], rec);
}

// The request's outcome once the stream ended.
void Conclude(const HttpReply& reply, const StreamState& st, RequestRecord* rec) {
  if (!reply.error.empty()) {
    rec->ok = false;
    rec->error = reply.error;
  } else if (rec->http_status != 200) {
    rec->ok = false;
    rec->error = fmt::format("HTTP {}: {}", rec->http_status, OneLine(reply.body));
  } else if (st.failed) {
    rec->ok = false;
    rec->error = st.error;
  } else if (!st.done && rec->finish_reason.empty()) {
    rec->ok = false;
    rec->error = "stream ended without [DONE] or finish_reason";
  } else {
    rec->ok = true;
  }
}

}  // namespace

Result<PromptMode> ParsePromptMode(const std::string& s) {
  if (const auto m = EnumFromName<PromptMode>(s, kPromptModeNames)) return *m;
  return InvalidArgument("--prompt-mode must be tokens, text or chat, got '" + s + "'");
}

const char* PromptModeName(PromptMode m) { return EnumName(m, kPromptModeNames); }

Result<std::unique_ptr<StreamClient>> StreamClient::Create(const ClientOptions& opt) {
  if (!(opt.timeout_s > 0)) return InvalidArgument("--timeout must be > 0");
  HttpOptions h;
  h.url = opt.url;
  h.api_key = opt.api_key;
  h.timeout_s = opt.timeout_s;
  h.connect_timeout_s = 10;
  h.keep_alive = true;
  auto http = OpenAiHttp::Create(h);
  if (!http.ok()) return InvalidArgument("--url: " + http.status().message());
  return std::unique_ptr<StreamClient>(new StreamClient(opt, std::move(*http)));
}

StreamClient::StreamClient(const ClientOptions& opt, std::unique_ptr<OpenAiHttp> http)
    : opt_(opt), http_(std::move(http)) {}

StreamClient::~StreamClient() = default;

Result<std::string> StreamClient::Get(const std::string& path) { return http_->Get(path); }

void StreamClient::Send(const std::vector<int32_t>& prompt, int32_t max_tokens, RequestRecord* rec) {
  json body;
  if (!opt_.model.empty()) body["model"] = opt_.model;
  std::string path = "/v1/completions";
  const bool chat = opt_.mode == PromptMode::kChat;
  if (opt_.mode == PromptMode::kTokens) {
    body["prompt"] = prompt;
  } else if (opt_.mode == PromptMode::kText) {
    body["prompt"] = TokenSpace::TextFor(prompt);
  } else {
    path = "/v1/chat/completions";
    body["messages"] = json::array({{{"role", "user"}, {"content", TokenSpace::TextFor(prompt)}}});
  }
  body["max_tokens"] = max_tokens;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["temperature"] = 0;
  if (opt_.ignore_eos) body["ignore_eos"] = true;

  StreamState st;
  OpenAiHttp::StreamHandlers h;
  h.on_start = [&] { st.t0 = NowSeconds(); };
  h.on_status = [&](int status) { rec->http_status = status; };
  h.on_data = [&](const std::string& data) { ReadStreamEvent(data, chat, &st, rec); };
  const HttpReply reply = http_->PostStream(path, body.dump(), h);
  rec->served_by = reply.replica;
  const double end = NowSeconds();
  rec->e2e_s = end - st.t0;
  if (rec->output_tokens < 0) rec->output_tokens = rec->output_chunks;
  rec->output_hash = OutputHash(st.text);
  Conclude(reply, st, rec);
}

Result<int64_t> QueryVocabSize(StreamClient& client) {
  PG_ASSIGN_OR_RETURN(std::string body, client.Get("/v1/models"));
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty()) {
    const json& m = j["data"][0];
    if (m.is_object()) {
      int64_t v = IntOr(m, "vocab_size", -1);
      if (v > 0) return v;
      if (m.contains("meta") && m["meta"].is_object()) {
        v = IntOr(m["meta"], "n_vocab", -1);
        if (v > 0) return v;
      }
    }
  }
  return NotFound("/v1/models reports no vocab_size");
}

Result<std::string> QueryModelId(StreamClient& client) { return FirstModelId(client.http()); }

Result<double> PrometheusCounter(const std::string& metrics_text, const std::string& name) {
  std::istringstream in(metrics_text);
  std::string line;
  double sum = 0;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, name.size(), name) != 0) continue;
    if (line.size() > name.size() && line[name.size()] != ' ' && line[name.size()] != '{') continue;
    size_t value_at = line.find_last_of('}');
    value_at = line.find_first_not_of(' ', value_at == std::string::npos ? name.size() : value_at + 1);
    if (value_at == std::string::npos) continue;
    char* end = nullptr;
    double v = std::strtod(line.c_str() + value_at, &end);
    if (end == line.c_str() + value_at || !std::isfinite(v)) continue;
    sum += v;
    found = true;
  }
  if (!found) return NotFound("metric " + name + " not in /metrics");
  return sum;
}

}  // namespace pg::bench
