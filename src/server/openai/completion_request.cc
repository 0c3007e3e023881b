// ParseCompletionRequest: the /v1/completions body (see openai_request.h).
#include <fmt/format.h>

#include <cstdint>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"
#include "server/openai/openai_fields.h"
#include "server/openai/openai_request.h"
#include "server/openai/response_format_request.h"

namespace pg {

using json = nlohmann::ordered_json;

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

}  // namespace pg
