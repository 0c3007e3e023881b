// ParseChatRequest / ParseCompletionRequest: a /v1/chat/completions or
// /v1/completions body into the shared request (core/request.h).
//
// Each checks every field's type and range and returns a 400 (with `param`)
// for anything wrong; nothing throws. Every sampling field (temperature,
// top_p, top_k, min_p, presence/frequency/repetition penalties, logit_bias,
// seed) reaches SamplingParams; counts are bounded by RequestLimits. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/request.h"

namespace pg {

// `n_vocab` bounds token ids in a token-array prompt; `n_ctx` bounds max_tokens.
// A key neither route reads is a 400 naming it (server/openai/openai_fields.h);
// `also_read`: keys the calling endpoint reads itself (/apply-template's
// add_generation_prompt).
ApiResult<ApiRequest> ParseChatRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                       const RequestLimits& limits = {},
                                       std::initializer_list<const char*> also_read = {});
ApiResult<ApiRequest> ParseCompletionRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                             const RequestLimits& limits = {});

}  // namespace pg
