// FitToContext: the last check of a parsed request before generation, once
// its prompt is tokenized. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {

// Checks prompt + max_tokens against the context (n_ctx) and against what the
// device KV tier can hold for one sequence (max_seq_tokens, ServiceInfo; 0 =
// no such bound), and sets max_tokens when absent to the room left under the
// smaller of the two. 400 with the token counts, and the bound broken, when
// the request cannot fit: such a request would otherwise fail in the engine.
// What did not fit, for the dialect to word.
struct ContextOverflow {
  int64_t prompt_tokens = 0;
  int64_t max_tokens = 0;  // 0 when the prompt alone leaves no room
  int64_t n_ctx = 0;
  int64_t limit = 0;  // the bound broken: n_ctx, or the KV tier's max_seq_tokens when smaller
  bool prompt_alone = false;
  std::string prompt_param;  // "messages" (chat) or "prompt"
};
// A dialect's words for an overflow (anthropic/anthropic_error.h has
// Anthropic's sentences, which Claude Code matches).
using ContextWording = ApiError (*)(const ContextOverflow& overflow);
// The server's own words, which the OpenAI routes and the Responses API
// send: code "context_length_exceeded" (the KV bound:
// "kv_capacity_exceeded"), a message naming the counts and the bound.
ApiError ContextOverflowError(const ContextOverflow& overflow);

// The words are `wording`'s (null: ContextOverflowError's).
std::optional<ApiError> FitToContext(ApiRequest* request, int64_t prompt_tokens, int64_t n_ctx,
                                     int64_t max_seq_tokens = 0, ContextWording wording = nullptr);

}  // namespace pg
