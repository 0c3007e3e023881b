#include "server/core/fit_to_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {

ApiError ContextOverflowError(const ContextOverflow& o) {
  const bool kv_bound = o.limit < o.n_ctx;
  if (o.prompt_alone && !kv_bound) {
    return BadRequest(fmt::format("the prompt is {} tokens, but the model's context is {} tokens (at least one must "
                                  "be left for the completion)",
                                  o.prompt_tokens, o.n_ctx),
                      o.prompt_param, "context_length_exceeded");
  }
  if (o.prompt_alone) {
    return BadRequest(fmt::format("the request needs at least {} tokens of KV ({} prompt + at least 1 completion) "
                                  "but the device tier holds at most {} tokens for one sequence (--kv-device-mem)",
                                  o.prompt_tokens + 1, o.prompt_tokens, o.limit),
                      o.prompt_param, "kv_capacity_exceeded");
  }
  if (o.prompt_tokens + o.max_tokens > o.n_ctx) {
    return BadRequest(fmt::format("the context is {} tokens, but {} were requested ({} in the prompt, {} for the "
                                  "completion); lower max_tokens",
                                  o.n_ctx, o.prompt_tokens + o.max_tokens, o.prompt_tokens, o.max_tokens),
                      "max_tokens", "context_length_exceeded");
  }
  return BadRequest(fmt::format("the request needs {} tokens of KV ({} prompt + {} max_tokens) but the device tier "
                                "holds at most {} tokens for one sequence (--kv-device-mem); lower max_tokens",
                                o.prompt_tokens + o.max_tokens, o.prompt_tokens, o.max_tokens, o.limit),
                    "max_tokens", "kv_capacity_exceeded");
}

std::optional<ApiError> FitToContext(ApiRequest* request, int64_t prompt_tokens, int64_t n_ctx, int64_t max_seq_tokens,
                                     ContextWording wording) {
  ContextOverflow o;
  o.prompt_tokens = prompt_tokens;
  o.n_ctx = n_ctx;
  o.prompt_param = request->chat ? "messages" : "prompt";
  const ContextWording words = wording ? wording : ContextOverflowError;
  if (prompt_tokens == 0) return BadRequest("the prompt is empty (0 tokens)", o.prompt_param);
  o.prompt_alone = true;
  o.limit = n_ctx;
  if (prompt_tokens >= n_ctx) return words(o);
  const bool kv_bound = max_seq_tokens > 0 && max_seq_tokens < n_ctx;
  if (kv_bound) o.limit = max_seq_tokens;
  if (kv_bound && prompt_tokens >= max_seq_tokens) return words(o);
  const int64_t room = o.limit - prompt_tokens;
  if (!request->max_tokens_given) {
    request->sampling.max_tokens = static_cast<int>(std::min<int64_t>(room, std::numeric_limits<int>::max()));
    return std::nullopt;
  }
  o.prompt_alone = false;
  o.max_tokens = request->sampling.max_tokens;
  if (prompt_tokens + o.max_tokens > o.limit) return words(o);
  return std::nullopt;
}

}  // namespace pg
