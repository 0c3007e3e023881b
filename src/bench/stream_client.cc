#include "bench/stream_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>
#include <sstream>
#include <string_view>

#include "base/clock.h"
#include "bench/output_match.h"
#include "bench/sse_parser.h"
#include "bench/token_space.h"

namespace pg::bench {
namespace {

using nlohmann::json;

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

}  // namespace

Result<PromptMode> ParsePromptMode(const std::string& s) {
  if (s == "tokens") return PromptMode::kTokens;
  if (s == "text") return PromptMode::kText;
  if (s == "chat") return PromptMode::kChat;
  return InvalidArgument("--prompt-mode must be tokens, text or chat, got '" + s + "'");
}

const char* PromptModeName(PromptMode m) {
  switch (m) {
    case PromptMode::kTokens: return "tokens";
    case PromptMode::kText: return "text";
    case PromptMode::kChat: return "chat";
  }
  return "?";
}

Result<ParsedUrl> ParseServerUrl(const std::string& url) {
  // Debian's cpp-httplib is built with OpenSSL, so https:// works too.
  size_t scheme_end = url.rfind("http://", 0) == 0 ? 7 : url.rfind("https://", 0) == 0 ? 8 : 0;
  if (scheme_end == 0) return InvalidArgument("--url must start with http:// or https://, got '" + url + "'");
  size_t slash = url.find('/', scheme_end);
  ParsedUrl p;
  p.origin = url.substr(0, slash);
  std::string host = p.origin.substr(scheme_end);
  if (host.empty() || host[0] == ':') return InvalidArgument("--url has no host: '" + url + "'");
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.back() != ']') {
    std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535) {
      return InvalidArgument("--url has a bad port: '" + url + "'");
    }
  }
  if (slash != std::string::npos) p.prefix = url.substr(slash);
  while (!p.prefix.empty() && p.prefix.back() == '/') p.prefix.pop_back();
  if (p.prefix.size() >= 3 && p.prefix.compare(p.prefix.size() - 3, 3, "/v1") == 0) {
    p.prefix.resize(p.prefix.size() - 3);
  }
  return p;
}

Result<std::unique_ptr<StreamClient>> StreamClient::Create(const ClientOptions& opt) {
  PG_ASSIGN_OR_RETURN(ParsedUrl url, ParseServerUrl(opt.url));
  if (!(opt.timeout_s > 0)) return InvalidArgument("--timeout must be > 0");
  return std::unique_ptr<StreamClient>(new StreamClient(opt, std::move(url)));
}

StreamClient::StreamClient(const ClientOptions& opt, ParsedUrl url) : opt_(opt), url_(std::move(url)) {
  http_ = std::make_unique<httplib::Client>(url_.origin);
  http_->set_keep_alive(true);
  http_->set_connection_timeout(10, 0);
  auto secs = static_cast<time_t>(opt_.timeout_s);
  auto usecs = static_cast<time_t>((opt_.timeout_s - static_cast<double>(secs)) * 1e6);
  http_->set_read_timeout(secs, usecs);
  http_->set_write_timeout(secs, usecs);
  if (!opt_.api_key.empty()) http_->set_bearer_token_auth(opt_.api_key.c_str());
}

StreamClient::~StreamClient() = default;

Result<std::string> StreamClient::Get(const std::string& path) {
  auto res = http_->Get((url_.prefix + path).c_str());
  if (!res) return Unavailable(fmt::format("GET {}{}: {}", url_.origin, path, httplib::to_string(res.error())));
  if (res->status != 200) return Unavailable(fmt::format("GET {}: HTTP {}", path, res->status));
  return res->body;
}

void StreamClient::Send(const std::vector<int32_t>& prompt, int32_t max_tokens, RequestRecord* rec) {
  json body;
  if (!opt_.model.empty()) body["model"] = opt_.model;
  std::string path = url_.prefix + "/v1/completions";
  const bool chat = opt_.mode == PromptMode::kChat;
  if (opt_.mode == PromptMode::kTokens) {
    body["prompt"] = prompt;
  } else if (opt_.mode == PromptMode::kText) {
    body["prompt"] = TokenSpace::TextFor(prompt);
  } else {
    path = url_.prefix + "/v1/chat/completions";
    body["messages"] = json::array({{{"role", "user"}, {"content", TokenSpace::TextFor(prompt)}}});
  }
  body["max_tokens"] = max_tokens;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["temperature"] = 0;
  if (opt_.ignore_eos) body["ignore_eos"] = true;

  StreamState st;
  std::string error_body;
  auto on_event = [&](const std::string& data) {
    if (data == "[DONE]") {
      st.done = true;
      return;
    }
    json j = json::parse(data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      st.failed = true;
      st.error = "unparsable stream event: " + OneLine(data, 120);
      return;
    }
    if (j.contains("error")) {
      st.failed = true;
      const json& e = j["error"];
      st.error = "server error event: " +
                 OneLine(e.is_object() && e.contains("message") && e["message"].is_string()
                             ? e["message"].get<std::string>()
                             : e.dump());
      return;
    }
    const double now = NowSeconds();
    const bool has_usage = j.contains("usage") && j["usage"].is_object();
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() && j["choices"][0].is_object()) {
      const json& c = j["choices"][0];
      const bool finished = c.contains("finish_reason") && c["finish_reason"].is_string();
      if (finished) rec->finish_reason = c["finish_reason"].get<std::string>();
      bool output = false;
      if (!chat) {
        if (c.contains("text") && c["text"].is_string()) {
          const std::string& text = c["text"].get_ref<const std::string&>();
          output = !text.empty() || (!finished && !has_usage);
          st.text += text;
        }
      } else if (c.contains("delta") && c["delta"].is_object()) {
        const json& d = c["delta"];
        for (const char* key : {"content", "reasoning_content"}) {
          if (!d.contains(key) || !d[key].is_string()) continue;
          const std::string& text = d[key].get_ref<const std::string&>();
          if (!text.empty()) output = true;
          if (std::string_view(key) == "content") st.text += text;
        }
      }
      if (output) {
        if (rec->output_chunks == 0) {
          rec->ttft_s = now - st.t0;
        } else {
          rec->itl_s.push_back(now - st.last);
        }
        st.last = now;
        ++rec->output_chunks;
      }
    }
    if (has_usage) {
      const json& u = j["usage"];
      rec->prompt_tokens = IntOr(u, "prompt_tokens", rec->prompt_tokens);
      int64_t completion = IntOr(u, "completion_tokens", -1);
      if (completion >= 0) {
        rec->output_tokens = completion;
        rec->output_from_usage = true;
      }
      if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
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
        }
      }
    }
    if (j.contains("timings") && j["timings"].is_object()) {
      const json& t = j["timings"];
      int64_t cache_n = IntOr(t, "cache_n", -1);
      int64_t prompt_n = IntOr(t, "prompt_n", -1);
      if (cache_n >= 0 && rec->cached_source != "usage") {
        rec->cached_tokens = cache_n;
        rec->cached_source = "timings";
      }
      if (rec->prompt_tokens < 0 && cache_n >= 0 && prompt_n >= 0) rec->prompt_tokens = cache_n + prompt_n;
    }
  };
  SseParser parser(on_event);

  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& r) {
    rec->http_status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (rec->http_status != 200) {
      if (error_body.size() < 4096) error_body.append(data, std::min<size_t>(n, 4096));
      return true;
    }
    parser.Feed(data, n);
    return !parser.overflowed();
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  st.t0 = NowSeconds();
  bool sent = http_->send(req, res, err);
  // A kept-alive connection the server closed while idle fails at once with
  // no response byte (llama-server closes idle connections): the request never
  // reached the server, so send it once more on a fresh connection.
  if (!sent && rec->http_status == 0 && parser.bytes_fed() == 0 &&
      (err == httplib::Error::Read || err == httplib::Error::Write)) {
    st.t0 = NowSeconds();
    sent = http_->send(req, res, err);
  }
  const double end = NowSeconds();
  if (sent && rec->http_status == 200) parser.Finish();
  rec->e2e_s = end - st.t0;
  if (rec->output_tokens < 0) rec->output_tokens = rec->output_chunks;
  rec->output_hash = OutputHash(st.text);

  if (!sent) {
    rec->ok = false;
    rec->error = fmt::format("transport: {}", httplib::to_string(err));
  } else if (rec->http_status != 200) {
    rec->ok = false;
    rec->error = fmt::format("HTTP {}: {}", rec->http_status, OneLine(error_body.empty() ? res.body : error_body));
  } else if (parser.overflowed()) {
    rec->ok = false;
    rec->error = "stream line longer than 64 MiB";
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

Result<std::string> QueryModelId(StreamClient& client) {
  PG_ASSIGN_OR_RETURN(std::string body, client.Get("/v1/models"));
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].is_object() && j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
    return j["data"][0]["id"].get<std::string>();
  }
  return NotFound("/v1/models lists no model");
}

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
