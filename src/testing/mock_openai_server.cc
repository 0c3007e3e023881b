#include "testing/mock_openai_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/prefix_reuse.h"
#include "metrics/metric_set.h"

namespace pg::bench {
namespace {

using nlohmann::json;

// Words of a text prompt become pseudo token ids (their hash), so text
// prompts share cached prefixes word by word.
std::vector<int32_t> WordsAsTokens(const std::string& text) {
  std::vector<int32_t> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.push_back(static_cast<int32_t>(std::hash<std::string>()(w) & 0x7fffffff));
  return out;
}

void SleepS(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(s * 1e6)));
}

}  // namespace

MockOpenAiServer::MockOpenAiServer(MockOptions opt)
    : opt_(opt),
      server_(std::make_unique<httplib::Server>()),
      cache_(std::make_unique<PrefixReuseTracker>(opt.block_tokens)) {}

MockOpenAiServer::~MockOpenAiServer() { Stop(); }

std::string MockOpenAiServer::url() const { return fmt::format("http://127.0.0.1:{}", port_); }

MockCounters MockOpenAiServer::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

std::vector<json> MockOpenAiServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<std::string> MockOpenAiServer::auth_headers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return auth_;
}

namespace {

// The prompt of a completion request (token ids, or text words as pseudo ids)
// and its max_tokens (default 16). False for a request the mock refuses.
bool ParseCompletion(const json& body, bool chat, int64_t vocab_size, std::vector<int32_t>* prompt,
                     int64_t* max_tokens) {
  *max_tokens = 16;
  if (body.is_object() && body.contains("max_tokens") && body["max_tokens"].is_number_integer()) {
    *max_tokens = body["max_tokens"].get<int64_t>();
  }
  if (!body.is_object() || *max_tokens < 1) return false;
  if (!chat && body.contains("prompt") && body["prompt"].is_array()) {
    for (const auto& t : body["prompt"]) {
      if (!t.is_number_integer() || (vocab_size > 0 && (t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab_size))) {
        return false;
      }
      prompt->push_back(t.get<int32_t>());
    }
  } else if (!chat && body.contains("prompt") && body["prompt"].is_string()) {
    *prompt = WordsAsTokens(body["prompt"].get<std::string>());
  } else if (chat && body.contains("messages") && body["messages"].is_array()) {
    std::string text;
    for (const auto& m : body["messages"]) {
      if (m.is_object() && m.contains("content") && m["content"].is_string()) text += m["content"].get<std::string>();
    }
    *prompt = WordsAsTokens(text);
  } else {
    return false;
  }
  return true;
}

bool SendEvent(httplib::DataSink& sink, const json& j) {
  std::string ev = "data: " + j.dump() + "\n\n";
  return sink.write(ev.data(), ev.size());
}

const char* ChunkObject(bool chat) { return chat ? "chat.completion.chunk" : "text_completion"; }

}  // namespace

Status MockOpenAiServer::Start() {
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  server_->set_tcp_nodelay(true);  // each SSE event leaves at once (no Nagle batching)
  server_->Post("/v1/completions",
                [this](const httplib::Request& q, httplib::Response& r) { HandleCompletion(q, r, false); });
  server_->Post("/v1/chat/completions",
                [this](const httplib::Request& q, httplib::Response& r) { HandleCompletion(q, r, true); });
  server_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json m = {{"id", opt_.model_id}, {"object", "model"}};
    if (opt_.vocab_size > 0) m["vocab_size"] = opt_.vocab_size;
    res.set_content(json{{"object", "list"}, {"data", json::array({m})}}.dump(), "application/json");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    MetricSet m;
    m.Counter("prosgrow_prompt_tokens_cached_total", "Prompt tokens served from the KV cache (mock).",
              counters_.cached_tokens);
    res.set_content(m.Render(), "text/plain");
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ < 0) return IoError("mock server: cannot bind 127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void MockOpenAiServer::HandleCompletion(const httplib::Request& req, httplib::Response& res, bool chat) {
  int64_t nth;
  json body = json::parse(req.body, nullptr, false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    nth = ++counters_.requests;
    requests_.push_back(body);
    auth_.push_back(req.get_header_value("Authorization"));
  }
  std::vector<int32_t> prompt;
  int64_t max_tokens = 16;
  if (!ParseCompletion(body, chat, opt_.vocab_size, &prompt, &max_tokens) || prompt.empty()) {
    res.status = 400;
    res.set_content(R"({"error":{"message":"bad request"}})", "application/json");
    return;
  }
  if (opt_.fail_every > 0 && nth % opt_.fail_every == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.failed_500;
    res.status = 500;
    res.set_content(R"({"error":{"message":"injected failure"}})", "application/json");
    return;
  }
  if (body.contains("stream") && body["stream"].is_boolean() && !body["stream"].get<bool>()) {
    return Answer(body, chat, static_cast<int64_t>(prompt.size()), max_tokens, res);
  }
  const bool drop = opt_.drop_every > 0 && nth % opt_.drop_every == 0;
  const int64_t cached = cache_->Observe(prompt);
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  res.set_chunked_content_provider("text/event-stream",
                                   [this, chat, drop, cached, n_prompt, max_tokens](size_t, httplib::DataSink& sink) {
                                     return Stream(sink, chat, drop, cached, n_prompt, max_tokens);
                                   });
}

bool MockOpenAiServer::Stream(httplib::DataSink& sink, bool chat, bool drop, int64_t cached, int64_t n_prompt,
                              int64_t max_tokens) {
  const char* object = ChunkObject(chat);
  if (chat)
    SendEvent(sink,
              {{"object", object},
               {"choices",
                {{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}}}}});
  SleepS(opt_.ttft_s);
  for (int64_t i = 0; i < max_tokens; ++i) {
    if (i > 0) SleepS(opt_.token_gap_s);
    json c = chat ? json{{"index", 0}, {"delta", {{"content", " tok"}}}, {"finish_reason", nullptr}}
                  : json{{"index", 0}, {"text", " tok"}, {"finish_reason", nullptr}};
    if (!SendEvent(sink, {{"object", object}, {"choices", json::array({c})}})) return false;
    if (drop) {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.dropped;
      return false;  // closes the connection mid-stream
    }
  }
  StreamEnd(sink, chat, cached, n_prompt, max_tokens);
  return true;
}

void MockOpenAiServer::StreamEnd(httplib::DataSink& sink, bool chat, int64_t cached, int64_t n_prompt,
                                 int64_t max_tokens) {
  const char* object = ChunkObject(chat);
  json fin = chat ? json{{"index", 0}, {"delta", json::object()}, {"finish_reason", "length"}}
                  : json{{"index", 0}, {"text", ""}, {"finish_reason", "length"}};
  json last = {{"object", object}, {"choices", json::array({fin})}};
  if (opt_.llama_timings) last["timings"] = {{"cache_n", cached}, {"prompt_n", n_prompt - cached}};
  SendEvent(sink, last);
  if (opt_.report_usage) {
    json details = {{"cached_tokens", cached}};
    if (opt_.report_tiers) {
      details["cached_tokens_by_tier"] = {{"device", cached - cached / 4}, {"host", cached / 4}, {"disk", 0}};
    }
    SendEvent(sink, {{"object", object},
                     {"choices", json::array()},
                     {"usage",
                      {{"prompt_tokens", n_prompt},
                       {"completion_tokens", max_tokens},
                       {"total_tokens", n_prompt + max_tokens},
                       {"prompt_tokens_details", details}}}});
  }
  {
    // Counted before [DONE] leaves: a client that has its stream
    // sees it in counters() and /metrics.
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.completed;
    counters_.prompt_tokens += n_prompt;
    counters_.output_tokens += max_tokens;
    counters_.cached_tokens += cached;
  }
  std::string done = "data: [DONE]\n\n";
  sink.write(done.data(), done.size());
  sink.done();
}

void MockOpenAiServer::Answer(const json& body, bool chat, int64_t n_prompt, int64_t max_tokens,
                              httplib::Response& res) {
  MockReply r;
  if (opt_.reply_fn) {
    r = opt_.reply_fn(body);
  } else {
    for (int64_t i = 0; i < max_tokens; ++i) r.text += " tok";
    r.finish_reason = "length";
    r.prompt_tokens = n_prompt;
    r.completion_tokens = max_tokens;
  }
  if (r.status != 200) {
    res.status = r.status;
    res.set_content(R"({"error":{"message":"injected failure"}})", "application/json");
    return;
  }
  json choice = {{"index", 0}, {"finish_reason", r.finish_reason}};
  if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", r.text}};
  } else {
    choice["text"] = r.text;
  }
  json reply = {{"id", "mock"},
                {"object", chat ? "chat.completion" : "text_completion"},
                {"choices", json::array({choice})},
                {"usage",
                 {{"prompt_tokens", r.prompt_tokens},
                  {"completion_tokens", r.completion_tokens},
                  {"total_tokens", r.prompt_tokens + r.completion_tokens}}}};
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.completed;
    counters_.prompt_tokens += r.prompt_tokens;
    counters_.output_tokens += r.completion_tokens;
  }
  res.set_content(reply.dump(), "application/json");
}

void MockOpenAiServer::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

}  // namespace pg::bench
