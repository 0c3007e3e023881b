#include "eval/openai_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/clock.h"

namespace pg {
namespace {

using nlohmann::json;

std::string OneLine(std::string_view text, size_t max_len = 200) {
  std::string out;
  for (char c : text.substr(0, max_len)) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  if (text.size() > max_len) out += "...";
  return out;
}

std::unique_ptr<httplib::Client> MakeHttpClient(const ClientConfig& config, const std::string& host_port) {
  auto client = std::make_unique<httplib::Client>(host_port);
  time_t sec = static_cast<time_t>(config.timeout_s);
  time_t usec = static_cast<time_t>((config.timeout_s - static_cast<double>(sec)) * 1e6);
  client->set_connection_timeout(sec, usec);
  client->set_read_timeout(sec, usec);
  client->set_write_timeout(sec, usec);
  if (!config.api_key.empty()) client->set_bearer_token_auth(config.api_key);
  return client;
}

}  // namespace

const char* CompletionEndpointName(CompletionEndpoint endpoint) {
  return endpoint == CompletionEndpoint::kChat ? "chat" : "completions";
}

Result<CompletionEndpoint> ParseCompletionEndpoint(std::string_view name) {
  if (name == "chat") return CompletionEndpoint::kChat;
  if (name == "completions") return CompletionEndpoint::kCompletions;
  return InvalidArgument(fmt::format("unknown endpoint \"{}\" (want chat or completions)", name));
}

Result<OpenAiClient> OpenAiClient::Create(ClientConfig config) {
  if (config.max_tokens <= 0) return InvalidArgument("max tokens must be positive");
  if (!(config.temperature >= 0) || !std::isfinite(config.temperature)) {
    return InvalidArgument("temperature must be a finite number >= 0");
  }
  if (!(config.timeout_s > 0) || !std::isfinite(config.timeout_s)) {
    return InvalidArgument("timeout must be a positive number of seconds");
  }
  std::string_view url = config.url;
  std::string_view scheme;
  for (std::string_view candidate : {"http://", "https://"}) {
    if (url.rfind(candidate, 0) == 0) scheme = candidate;
  }
  if (scheme.empty()) return InvalidArgument(fmt::format("URL \"{}\" must start with http:// or https://", url));
  std::string_view rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (authority.empty()) return InvalidArgument(fmt::format("URL \"{}\" has no host", url));
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    std::string_view port = authority.substr(colon + 1);
    bool digits = !port.empty() && port.size() <= 5;
    for (char c : port) digits = digits && c >= '0' && c <= '9';
    if (!digits || std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535) {
      return InvalidArgument(fmt::format("URL \"{}\" has a bad port", url));
    }
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0) path.resize(path.size() - 3);

  OpenAiClient client(std::move(config));
  client.host_port_ = fmt::format("{}{}", scheme, authority);
  client.path_prefix_ = std::move(path);
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
  std::string path = path_prefix_ + (chat ? "/v1/chat/completions" : "/v1/completions");

  auto http = MakeHttpClient(config_, host_port_);
  double start = NowSeconds();
  httplib::Result res = http->Post(path.c_str(), body.dump(), "application/json");
  result.latency_s = NowSeconds() - start;
  if (!res) {
    result.error = fmt::format("request to {}{} failed: {}", host_port_, path, httplib::to_string(res.error()));
    return result;
  }
  if (res->status != 200) {
    result.error = fmt::format("HTTP {}: {}", res->status, OneLine(res->body));
    return result;
  }
  json reply = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    result.error = fmt::format("response is not a JSON object: {}", OneLine(res->body));
    return result;
  }
  auto choices = reply.find("choices");
  if (choices == reply.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    result.error = fmt::format("response has no choices: {}", OneLine(res->body));
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
    result.error = fmt::format("response has no choices[0].{}: {}", chat ? "message.content" : "text",
                               OneLine(res->body));
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

Result<std::string> OpenAiClient::FirstModelId() const {
  auto http = MakeHttpClient(config_, host_port_);
  std::string path = path_prefix_ + "/v1/models";
  httplib::Result res = http->Get(path.c_str());
  if (!res) {
    return Unavailable(fmt::format("GET {}{} failed: {}", host_port_, path, httplib::to_string(res.error())));
  }
  if (res->status != 200) return Unavailable(fmt::format("GET {}: HTTP {}", path, res->status));
  json reply = json::parse(res->body, nullptr, false);
  if (reply.is_object()) {
    auto data = reply.find("data");
    if (data != reply.end() && data->is_array() && !data->empty() && (*data)[0].is_object()) {
      auto id = (*data)[0].find("id");
      if (id != (*data)[0].end() && id->is_string()) return id->get<std::string>();
    }
  }
  return Unavailable(fmt::format("GET {}: no model id in the reply", path));
}

}  // namespace pg
