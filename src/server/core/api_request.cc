#include "server/core/api_request.h"

#include <fmt/format.h>

#include <cstdint>

#include "base/bounded_json.h"
#include "base/utf8.h"
#include "server/core/request_fields.h"
#include "server/core/response_format_request.h"
#include "server/openai/openai_fields.h"

namespace pg {

using json = nlohmann::ordered_json;

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
    return BadRequest(fmt::format("request body must be a JSON object, got {}", JsonTypeName(parsed)), "",
                      "invalid_type");
  }
  return parsed;
}

ApiResult<ApiRequest> ParseCompletionRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                             const RequestLimits& limits) {
  FieldReader r(body);
  ApiRequest req;
  req.chat = false;
  ReadCommonFields(r, n_vocab, n_ctx, limits, &req);
  ReadOutputFormat(r, &req);

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
        r.Fail(BadRequest(fmt::format("prompt[{}] must be an integer token id, got {}", i, JsonTypeName(t)), "prompt",
                          "invalid_type"));
        return;
      }
      int64_t id =
          t.is_number_unsigned() && t.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : t.get<int64_t>();
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
  CheckFieldNames(r, body, OpenAiRoute::kCompletion);
  if (r.failed()) return r.error();
  return req;
}

namespace {

// Anthropic's wording of the two context errors (what Claude Code matches).
ApiError AnthropicContextError(int64_t prompt_tokens, int64_t max_tokens, int64_t limit, bool prompt_alone) {
  if (prompt_alone) {
    return BadRequest(fmt::format("prompt is too long: {} tokens > {} maximum", prompt_tokens, limit - 1), "messages",
                      "context_length_exceeded");
  }
  return BadRequest(
      fmt::format("input length and `max_tokens` exceed context limit: {} + {} > {}", prompt_tokens, max_tokens, limit),
      "max_tokens", "context_length_exceeded");
}

}  // namespace

std::optional<ApiError> FitToContext(ApiRequest* request, int64_t prompt_tokens, int64_t n_ctx, int64_t max_seq_tokens,
                                     ContextWords words) {
  const std::string prompt_param = request->chat ? "messages" : "prompt";
  const bool anthropic = words == ContextWords::kAnthropic;
  if (prompt_tokens == 0) return BadRequest("the prompt is empty (0 tokens)", prompt_param);
  if (prompt_tokens >= n_ctx) {
    if (anthropic) return AnthropicContextError(prompt_tokens, 0, n_ctx, true);
    return BadRequest(fmt::format("the prompt is {} tokens, but the model's context is {} tokens (at least one must "
                                  "be left for the completion)",
                                  prompt_tokens, n_ctx),
                      prompt_param, "context_length_exceeded");
  }
  const bool kv_bound = max_seq_tokens > 0 && max_seq_tokens < n_ctx;
  if (kv_bound && prompt_tokens >= max_seq_tokens) {
    if (anthropic) return AnthropicContextError(prompt_tokens, 0, max_seq_tokens, true);
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
  if (prompt_tokens + max_tokens > limit && anthropic) {
    return AnthropicContextError(prompt_tokens, max_tokens, limit, false);
  }
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