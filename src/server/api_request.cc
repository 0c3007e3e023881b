#include "server/api_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "server/stop_string_filter.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

constexpr int kMaxTopLogprobs = 20;
constexpr double kMinRepetitionPenalty = 1e-6;  // both spelled out in the 400's message
constexpr double kMaxRepetitionPenalty = 1e6;

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_float: return "number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    default: return "unknown";
  }
}

// Reads optional top-level fields; remembers the first error. A null value
// counts as absent.
class FieldReader {
 public:
  explicit FieldReader(const json& body) : body_(body) {}

  bool failed() const { return error_.has_value(); }
  const ApiError& error() const { return *error_; }
  void Fail(ApiError e) {
    if (!error_) error_ = std::move(e);
  }

  const json* Get(const char* key) const {
    auto it = body_.find(key);
    if (it == body_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  bool Bool(const char* key, bool* out) {
    const json* v = Get(key);
    if (!v) return false;
    if (!v->is_boolean()) return WrongType(key, "a boolean", *v);
    *out = v->get<bool>();
    return true;
  }

  bool Number(const char* key, double* out) {
    const json* v = Get(key);
    if (!v) return false;
    if (!v->is_number()) return WrongType(key, "a number", *v);
    *out = v->get<double>();
    return true;
  }

  bool Int(const char* key, int64_t* out) {
    const json* v = Get(key);
    if (!v) return false;
    if (v->is_number_integer()) {
      *out = v->get<int64_t>();
      if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) *out = INT64_MAX;
      return true;
    }
    if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::floor(d) == d && std::fabs(d) < 9e15) {
        *out = static_cast<int64_t>(d);
        return true;
      }
    }
    return WrongType(key, "an integer", *v);
  }

  bool String(const char* key, std::string* out) {
    const json* v = Get(key);
    if (!v) return false;
    if (!v->is_string()) return WrongType(key, "a string", *v);
    *out = v->get<std::string>();
    return true;
  }

  bool WrongType(const char* key, const char* expected, const json& v) {
    Fail(BadRequest(fmt::format("'{}' must be {}, got {}", key, expected, TypeName(v)), key,
                    "invalid_type"));
    return false;
  }

 private:
  const json& body_;
  std::optional<ApiError> error_;
};

// A client's string for an error message: at most ~40 bytes, cut on a UTF-8
// character boundary (the body was checked to be valid UTF-8).
std::string Excerpt(const std::string& text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return text;
  size_t end = kMax;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// logit_bias: {"<token id>": bias in [-100, 100], ...} -> sorted (id, bias).
void ReadLogitBias(FieldReader& r, int64_t n_vocab, const RequestLimits& limits, SamplingParams* s) {
  const json* lb = r.Get("logit_bias");
  if (!lb) return;
  if (!lb->is_object()) {
    r.WrongType("logit_bias", "an object", *lb);
    return;
  }
  if (lb->size() > static_cast<size_t>(limits.max_logit_bias)) {
    r.Fail(BadRequest(fmt::format("'logit_bias' has {} entries, more than the limit of {} (--max-logit-bias)",
                                  lb->size(), limits.max_logit_bias),
                      "logit_bias", "too_many_logit_bias"));
    return;
  }
  s->logit_bias.reserve(lb->size());
  for (auto it = lb->begin(); it != lb->end(); ++it) {
    const std::string& key = it.key();
    int64_t id = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || end != key.data() + key.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      r.Fail(BadRequest(fmt::format("'logit_bias' key \"{}\" is not a token id (a decimal integer string)",
                                    Excerpt(key)),
                        "logit_bias", "invalid_logit_bias"));
      return;
    }
    if (ec != std::errc() || id < 0 || id >= n_vocab) {
      r.Fail(BadRequest(fmt::format("'logit_bias' key \"{}\" is outside the vocabulary [0, {})", Excerpt(key), n_vocab),
                        "logit_bias", "invalid_logit_bias"));
      return;
    }
    const json& v = it.value();
    if (!v.is_number()) {
      r.Fail(BadRequest(fmt::format("'logit_bias' value for \"{}\" must be a number, got {}", key, TypeName(v)),
                        "logit_bias", "invalid_type"));
      return;
    }
    const double bias = v.get<double>();
    if (!(bias >= -100 && bias <= 100)) {
      r.Fail(BadRequest(fmt::format("'logit_bias' value for \"{}\" must be in [-100, 100], got {}", key, bias),
                        "logit_bias", "invalid_logit_bias"));
      return;
    }
    s->logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
  }
  std::sort(s->logit_bias.begin(), s->logit_bias.end());
  for (size_t i = 1; i < s->logit_bias.size(); ++i) {
    if (s->logit_bias[i].first == s->logit_bias[i - 1].first) {
      r.Fail(BadRequest(fmt::format("'logit_bias' names token id {} twice", s->logit_bias[i].first), "logit_bias",
                        "invalid_logit_bias"));
      return;
    }
  }
}

// Fields shared by both endpoints.
void ReadCommon(FieldReader& r, int64_t n_vocab, int64_t n_ctx, const RequestLimits& limits, ApiRequest* req) {
  SamplingParams& s = req->sampling;
  r.String("model", &req->model);

  double d = 0;
  if (r.Number("temperature", &d)) {
    if (d < 0 || d > 100) r.Fail(BadRequest(fmt::format("'temperature' must be in [0, 100], got {}", d), "temperature"));
    s.temperature = static_cast<float>(d);
  }
  if (r.Number("top_p", &d)) {
    if (!(d > 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'top_p' must be in (0, 1], got {}", d), "top_p"));
    s.top_p = static_cast<float>(d);
  }
  if (r.Number("min_p", &d)) {
    if (!(d >= 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'min_p' must be in [0, 1], got {}", d), "min_p"));
    s.min_p = static_cast<float>(d);
  }
  for (auto [key, out] : {std::pair{"presence_penalty", &s.presence_penalty},
                           std::pair{"frequency_penalty", &s.frequency_penalty}}) {
    if (!r.Number(key, &d)) continue;
    if (d < -2 || d > 2) r.Fail(BadRequest(fmt::format("'{}' must be in [-2, 2], got {}", key, d), key));
    else *out = static_cast<float>(d);
  }
  // > 0 as in vLLM and llama.cpp; the bounds keep logit / penalty and
  // logit * penalty finite in float.
  if (r.Number("repetition_penalty", &d)) {
    if (!(d >= kMinRepetitionPenalty && d <= kMaxRepetitionPenalty)) {
      r.Fail(BadRequest(fmt::format("'repetition_penalty' must be > 0 (1 = off), within [1e-6, 1e6], got {}", d),
                        "repetition_penalty"));
    } else {
      s.repetition_penalty = static_cast<float>(d);
    }
  }

  int64_t i;
  if (r.Int("top_k", &i)) {
    if (i < -1 || i > 1000000) r.Fail(BadRequest(fmt::format("'top_k' must be -1, 0 (off) or positive, got {}", i), "top_k"));
    s.top_k = i <= 0 ? 0 : static_cast<int>(i);
  }
  if (r.Int("seed", &i)) {
    s.has_seed = true;
    s.seed = static_cast<uint64_t>(i);
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (!r.Int(key, &i)) continue;
    if (i < 1) {
      r.Fail(BadRequest(fmt::format("'{}' must be at least 1, got {}", key, i), key));
    } else if (i > n_ctx) {
      r.Fail(BadRequest(fmt::format("'{}' is {}, more than the model's context of {} tokens", key, i, n_ctx), key));
    } else {
      s.max_tokens = static_cast<int>(i);
      req->max_tokens_given = true;
    }
  }
  if (r.Int("n", &i) && i != 1) {
    r.Fail(BadRequest(fmt::format("'n' must be 1 (only one choice per request is supported), got {}", i), "n"));
  }
  if (r.Int("best_of", &i) && i != 1) r.Fail(BadRequest("'best_of' must be 1", "best_of"));
  r.Bool("ignore_eos", &s.ignore_eos);
  r.Bool("stream", &req->stream);
  r.String("user", &req->user);
  if (r.Number("cache_ttl_s", &d)) {
    if (d < 0 || d > 1e9) r.Fail(BadRequest(fmt::format("'cache_ttl_s' must be in [0, 1e9], got {}", d), "cache_ttl_s"));
    req->cache_ttl_s = d;
  }

  if (const json* so = r.Get("stream_options")) {
    if (!so->is_object()) {
      r.WrongType("stream_options", "an object", *so);
    } else if (auto it = so->find("include_usage"); it != so->end() && !it->is_null()) {
      if (!it->is_boolean()) r.WrongType("stream_options.include_usage", "a boolean", *it);
      else req->include_usage = it->get<bool>();
    }
  }

  if (const json* stop = r.Get("stop")) {
    if (stop->is_string()) {
      req->stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      if (stop->size() > static_cast<size_t>(limits.max_stop)) {
        r.Fail(BadRequest(fmt::format("'stop' has {} strings, more than the limit of {} (--max-stop)", stop->size(),
                                      limits.max_stop),
                          "stop", "too_many_stop_strings"));
      }
      for (const json& s1 : *stop) {
        if (!s1.is_string()) {
          r.WrongType("stop", "a string or an array of strings", s1);
          break;
        }
        req->stop.push_back(s1.get<std::string>());
      }
    } else {
      r.WrongType("stop", "a string or an array of strings", *stop);
    }
    for (const std::string& s1 : req->stop) {
      if (s1.empty()) r.Fail(BadRequest("'stop' strings must not be empty", "stop"));
    }
  }
  ReadLogitBias(r, n_vocab, limits, &s);
}

// Chat content: a string, null, or an array of {"type": "text", "text": ...} parts.
bool NormaliseContent(json& msg, size_t index, FieldReader& r) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null() || it->is_string()) return true;
  std::string param = fmt::format("messages[{}].content", index);
  if (!it->is_array()) return r.WrongType(param.c_str(), "a string or an array of content parts", *it);
  std::string joined;
  for (const json& part : *it) {
    if (!part.is_object()) return r.WrongType(param.c_str(), "an array of content-part objects", part);
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) {
      r.Fail(BadRequest(fmt::format("{}: every part needs a string 'type'", param), param));
      return false;
    }
    if (*type != "text") {
      r.Fail(BadRequest(fmt::format("{}: content part type '{}' is not supported (text only)", param,
                                    type->get<std::string>()),
                        param));
      return false;
    }
    auto text = part.find("text");
    if (text == part.end() || !text->is_string()) {
      r.Fail(BadRequest(fmt::format("{}: a text part needs a string 'text'", param), param));
      return false;
    }
    joined += text->get<std::string>();
  }
  *it = joined;
  return true;
}

bool NormaliseToolCalls(json& msg, size_t index, FieldReader& r) {
  auto it = msg.find("tool_calls");
  if (it == msg.end() || it->is_null()) return true;
  std::string param = fmt::format("messages[{}].tool_calls", index);
  if (!it->is_array()) return r.WrongType(param.c_str(), "an array", *it);
  for (json& call : *it) {
    if (!call.is_object()) return r.WrongType(param.c_str(), "an array of objects", call);
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
      r.Fail(BadRequest(fmt::format("{}: each call needs a 'function' object with a string 'name'", param), param));
      return false;
    }
    // Templates expect arguments as an object; the API carries a JSON string.
    auto args = fn->find("arguments");
    if (args != fn->end() && args->is_string()) {
      json parsed = ParseBoundedOrDiscard(args->get<std::string>());
      if (!parsed.is_discarded()) *args = std::move(parsed);
    }
  }
  return true;
}

}  // namespace

ApiResult<nlohmann::ordered_json> ParseJsonBody(const std::string& body, int max_depth) {
  if (!IsValidUtf8(body)) return BadRequest("request body is not valid UTF-8", "", "invalid_utf8");
  json parsed;
  JsonParseError e = ParseBoundedJson(body, max_depth, &parsed);
  if (e.kind == JsonParseError::Kind::kTooDeep) {
    return BadRequest(fmt::format("request body {} (limit: --max-json-depth)", e.message), "", "json_too_deep");
  }
  if (e.kind != JsonParseError::Kind::kNone) {
    return BadRequest(fmt::format("request body is not valid JSON: {}", e.message), "", "invalid_json");
  }
  if (!parsed.is_object()) {
    return BadRequest(fmt::format("request body must be a JSON object, got {}", TypeName(parsed)), "",
                      "invalid_type");
  }
  return parsed;
}

ApiResult<ApiRequest> ParseChatRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                       const RequestLimits& limits) {
  FieldReader r(body);
  ApiRequest req;
  req.chat = true;
  ReadCommon(r, n_vocab, n_ctx, limits, &req);

  bool logprobs = false;
  r.Bool("logprobs", &logprobs);
  int64_t top = 0;
  if (r.Int("top_logprobs", &top)) {
    if (top < 0 || top > kMaxTopLogprobs) {
      r.Fail(BadRequest(fmt::format("'top_logprobs' must be in [0, {}], got {}", kMaxTopLogprobs, top), "top_logprobs"));
    } else if (top > 0 && !logprobs) {
      r.Fail(BadRequest("'top_logprobs' requires 'logprobs': true", "top_logprobs"));
    }
  }
  req.sampling.logprobs = logprobs;
  req.sampling.top_logprobs = logprobs ? static_cast<int>(top) : 0;

  const json* messages = r.Get("messages");
  if (!messages) {
    r.Fail(BadRequest("'messages' is required", "messages"));
  } else if (!messages->is_array()) {
    r.WrongType("messages", "an array", *messages);
  } else if (messages->empty()) {
    r.Fail(BadRequest("'messages' must not be empty", "messages"));
  } else if (messages->size() > static_cast<size_t>(limits.max_messages)) {
    r.Fail(BadRequest(fmt::format("'messages' has {} entries, more than the limit of {} (--max-messages)",
                                  messages->size(), limits.max_messages),
                      "messages", "too_many_messages"));
  } else {
    req.messages = *messages;
    for (size_t i = 0; i < req.messages.size() && !r.failed(); ++i) {
      json& m = req.messages[i];
      std::string param = fmt::format("messages[{}]", i);
      if (!m.is_object()) {
        r.WrongType(param.c_str(), "an object", m);
        break;
      }
      auto role = m.find("role");
      if (role == m.end() || !role->is_string()) {
        r.Fail(BadRequest(fmt::format("{} needs a string 'role'", param), param + ".role"));
        break;
      }
      const std::string rs = role->get<std::string>();
      if (rs != "system" && rs != "user" && rs != "assistant" && rs != "tool" && rs != "developer") {
        r.Fail(BadRequest(fmt::format("{}.role '{}' is not one of system, developer, user, assistant, tool", param, rs),
                          param + ".role", "invalid_role"));
        break;
      }
      if (!NormaliseContent(m, i, r) || !NormaliseToolCalls(m, i, r)) break;
      bool has_content = m.contains("content") && m["content"].is_string();
      bool has_calls = m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
      if (!has_content && !(rs == "assistant" && has_calls)) {
        r.Fail(BadRequest(fmt::format("{} ({}) needs 'content'", param, rs), param + ".content"));
        break;
      }
      if (m.contains("content") && m["content"].is_null()) m["content"] = "";
    }
  }

  if (const json* tools = r.Get("tools")) {
    if (!tools->is_array()) {
      r.WrongType("tools", "an array", *tools);
    } else if (tools->size() > static_cast<size_t>(limits.max_tools)) {
      r.Fail(BadRequest(fmt::format("'tools' has {} entries, more than the limit of {} (--max-tools)", tools->size(),
                                    limits.max_tools),
                        "tools", "too_many_tools"));
    } else {
      for (size_t i = 0; i < tools->size(); ++i) {
        const json& t = (*tools)[i];
        const json* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
        if (!fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
          r.Fail(BadRequest(fmt::format("tools[{}] must be {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}", i),
                            fmt::format("tools[{}]", i)));
          break;
        }
      }
      if (!tools->empty()) req.tools = *tools;
    }
  }
  if (r.failed()) return r.error();
  return req;
}

ApiResult<ApiRequest> ParseCompletionRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                             const RequestLimits& limits) {
  FieldReader r(body);
  ApiRequest req;
  req.chat = false;
  ReadCommon(r, n_vocab, n_ctx, limits, &req);

  int64_t lp = 0;
  if (r.Int("logprobs", &lp)) {
    if (lp < 0 || lp > kMaxTopLogprobs) {
      r.Fail(BadRequest(fmt::format("'logprobs' must be in [0, {}], got {}", kMaxTopLogprobs, lp), "logprobs"));
    }
    req.sampling.logprobs = true;
    req.sampling.top_logprobs = static_cast<int>(lp);
  }
  bool echo = false;
  if (r.Bool("echo", &echo) && echo) r.Fail(BadRequest("'echo' is not supported", "echo"));
  std::string suffix;
  if (r.String("suffix", &suffix) && !suffix.empty()) r.Fail(BadRequest("'suffix' is not supported", "suffix"));

  const json* prompt = r.Get("prompt");
  auto read_tokens = [&](const json& arr) {
    req.prompt_is_tokens = true;
    for (size_t i = 0; i < arr.size(); ++i) {
      const json& t = arr[i];
      if (!t.is_number_integer()) {
        r.Fail(BadRequest(fmt::format("prompt[{}] must be an integer token id, got {}", i, TypeName(t)), "prompt",
                          "invalid_type"));
        return;
      }
      int64_t id = t.is_number_unsigned() && t.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX
                                                                                                 : t.get<int64_t>();
      if (id < 0 || id >= n_vocab) {
        r.Fail(BadRequest(fmt::format("prompt[{}] token id {} is outside the vocabulary [0, {})", i, id, n_vocab),
                          "prompt", "invalid_token"));
        return;
      }
      req.prompt_tokens.push_back(static_cast<int32_t>(id));
    }
  };
  if (!prompt) {
    r.Fail(BadRequest("'prompt' is required", "prompt"));
  } else if (prompt->is_string()) {
    req.prompt_text = prompt->get<std::string>();
  } else if (prompt->is_array()) {
    if (prompt->empty()) {
      r.Fail(BadRequest("'prompt' must not be empty", "prompt"));
    } else if ((*prompt)[0].is_string() || (*prompt)[0].is_array()) {
      // A batch of prompts: only a batch of one is served.
      if (prompt->size() != 1) {
        r.Fail(BadRequest(fmt::format("'prompt' holds {} prompts; only one per request is supported", prompt->size()),
                          "prompt"));
      } else if ((*prompt)[0].is_string()) {
        req.prompt_text = (*prompt)[0].get<std::string>();
      } else if ((*prompt)[0].empty()) {
        r.Fail(BadRequest("'prompt' must not be empty", "prompt"));
      } else {
        read_tokens((*prompt)[0]);
      }
    } else {
      read_tokens(*prompt);
    }
  } else {
    r.WrongType("prompt", "a string or an array of token ids", *prompt);
  }
  if (r.failed()) return r.error();
  return req;
}

std::optional<ApiError> FitToContext(ApiRequest* request, int64_t prompt_tokens, int64_t n_ctx,
                                     int64_t max_seq_tokens) {
  const std::string prompt_param = request->chat ? "messages" : "prompt";
  if (prompt_tokens == 0) return BadRequest("the prompt is empty (0 tokens)", prompt_param);
  if (prompt_tokens >= n_ctx) {
    return BadRequest(fmt::format("the prompt is {} tokens, but the model's context is {} tokens (at least one must "
                                  "be left for the completion)",
                                  prompt_tokens, n_ctx),
                      prompt_param, "context_length_exceeded");
  }
  const bool kv_bound = max_seq_tokens > 0 && max_seq_tokens < n_ctx;
  if (kv_bound && prompt_tokens >= max_seq_tokens) {
    return BadRequest(fmt::format("the request needs at least {} tokens of KV ({} prompt + at least 1 completion) "
                                  "but the device tier holds at most {} tokens for one sequence (--kv-device-mem)",
                                  prompt_tokens + 1, prompt_tokens, max_seq_tokens),
                      prompt_param, "kv_capacity_exceeded");
  }
  const int64_t limit = kv_bound ? max_seq_tokens : n_ctx;
  const int64_t room = limit - prompt_tokens;
  if (!request->max_tokens_given) {
    request->sampling.max_tokens = static_cast<int>(std::min<int64_t>(room, std::numeric_limits<int>::max()));
    return std::nullopt;
  }
  const int64_t max_tokens = request->sampling.max_tokens;
  if (prompt_tokens + max_tokens > n_ctx) {
    return BadRequest(fmt::format("the context is {} tokens, but {} were requested ({} in the prompt, {} for the "
                                  "completion); lower max_tokens",
                                  n_ctx, prompt_tokens + max_tokens, prompt_tokens, max_tokens),
                      "max_tokens", "context_length_exceeded");
  }
  if (prompt_tokens + max_tokens > limit) {
    return BadRequest(fmt::format("the request needs {} tokens of KV ({} prompt + {} max_tokens) but the device tier "
                                  "holds at most {} tokens for one sequence (--kv-device-mem); lower max_tokens",
                                  prompt_tokens + max_tokens, prompt_tokens, max_tokens, max_seq_tokens),
                      "max_tokens", "kv_capacity_exceeded");
  }
  return std::nullopt;
}

}  // namespace pg
