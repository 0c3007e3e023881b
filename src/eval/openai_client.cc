#include "eval/openai_client.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/enum_names.h"
#include "client/openai_http.h"
#include "eval/enum_flag.h"

namespace pg {
namespace {

using nlohmann::json;

std::string OneLine(std::string_view text, size_t max_len = 200) {
  std::string out;
  for (char c : text.substr(0, max_len)) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  if (text.size() > max_len) out += "...";
  return out;
}

constexpr const char* kEndpointNames[] = {"chat", "completions"};  // by CompletionEndpoint

}  // namespace

const char* CompletionEndpointName(CompletionEndpoint endpoint) { return EnumName(endpoint, kEndpointNames); }

Result<CompletionEndpoint> ParseCompletionEndpoint(std::string_view name) {
  return ParseEnumFlag<CompletionEndpoint>(name, kEndpointNames, "endpoint");
}

Result<OpenAiClient> OpenAiClient::Create(ClientConfig config) {
  if (config.max_tokens <= 0) return InvalidArgument("max tokens must be positive");
  if (!(config.temperature >= 0) || !std::isfinite(config.temperature)) {
    return InvalidArgument("temperature must be a finite number >= 0");
  }
  if (!(config.timeout_s > 0) || !std::isfinite(config.timeout_s)) {
    return InvalidArgument("timeout must be a positive number of seconds");
  }
  auto url = ParseServerUrl(config.url);
  if (!url.ok()) return url.status();
  OpenAiClient client(std::move(config));
  client.host_port_ = url->origin;
  client.path_prefix_ = url->prefix;
  return client;
}

CompletionResult OpenAiClient::Complete(const std::string& prompt) const {
  CompletionResult result;
  const bool chat = config_.endpoint == CompletionEndpoint::kChat;
  json body;
  if (!config_.model.empty()) body["model"] = config_.model;
  if (chat) {
    body["messages"] = json::array({json{{"role", "user"}, {"content", prompt}}});
  } else {
    body["prompt"] = prompt;
    body["stop"] = json::array({"\nQuestion:"});
  }
  body["max_tokens"] = config_.max_tokens;
  body["temperature"] = config_.temperature;
  body["stream"] = false;
  const std::string path = chat ? "/v1/chat/completions" : "/v1/completions";

  auto http = Connect();
  if (!http.ok()) {
    result.error = http.status().message();
    return result;
  }
  double start = NowSeconds();
  const HttpReply res = (*http)->PostJson(path, body.dump());
  result.latency_s = NowSeconds() - start;
  if (!res.sent) {
    result.error = res.error;
    return result;
  }
  if (res.status != 200) {
    result.error = fmt::format("HTTP {}: {}", res.status, OneLine(res.body));
    return result;
  }
  json reply = json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    result.error = fmt::format("response is not a JSON object: {}", OneLine(res.body));
    return result;
  }
  auto choices = reply.find("choices");
  if (choices == reply.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    result.error = fmt::format("response has no choices: {}", OneLine(res.body));
    return result;
  }
  const json& choice = (*choices)[0];
  const json* text = nullptr;
  if (chat) {
    auto msg = choice.find("message");
    if (msg != choice.end() && msg->is_object()) {
      auto content = msg->find("content");
      if (content != msg->end()) text = &*content;
    }
  } else {
    auto t = choice.find("text");
    if (t != choice.end()) text = &*t;
  }
  if (text == nullptr || !(text->is_string() || text->is_null())) {
    result.error =
        fmt::format("response has no choices[0].{}: {}", chat ? "message.content" : "text", OneLine(res.body));
    return result;
  }
  if (text->is_string()) result.text = text->get<std::string>();
  auto finish = choice.find("finish_reason");
  if (finish != choice.end() && finish->is_string()) result.finish_reason = finish->get<std::string>();
  auto usage = reply.find("usage");
  if (usage != reply.end() && usage->is_object()) {
    auto tokens = usage->find("completion_tokens");
    if (tokens != usage->end() && tokens->is_number_integer()) result.completion_tokens = tokens->get<int>();
  }
  result.ok = true;
  return result;
}

Result<std::unique_ptr<OpenAiHttp>> OpenAiClient::Connect() const {
  HttpOptions h;
  h.url = config_.url;
  h.api_key = config_.api_key;
  h.timeout_s = config_.timeout_s;
  return OpenAiHttp::Create(h);
}

Result<std::string> OpenAiClient::FirstModelId() const {
  PG_ASSIGN_OR_RETURN(auto http, Connect());
  auto id = pg::FirstModelId(*http);
  if (!id.ok()) return Unavailable(id.status().message());
  return id;
}

}  // namespace pg
