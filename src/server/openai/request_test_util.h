// Private test helpers for the request parser tests: a body parsed as the
// OpenAI routes parse it, for a model of kTestVocab tokens and kTestCtx
// positions.
#pragma once

#include <cstdint>
#include <string>

#include "server/common/api_error.h"
#include "server/core/json_body.h"
#include "server/core/request.h"
#include "server/openai/openai_request.h"

namespace pg::testing {

inline constexpr int64_t kTestVocab = 1000;
inline constexpr int64_t kTestCtx = 512;

inline ApiResult<ApiRequest> ParseChatBody(const std::string& body) {
  ApiResult<nlohmann::ordered_json> j = ParseJsonBody(body);
  if (!j.ok()) return j.error;
  return ParseChatRequest(j.value, kTestVocab, kTestCtx);
}

inline ApiResult<ApiRequest> ParseCompletionBody(const std::string& body) {
  ApiResult<nlohmann::ordered_json> j = ParseJsonBody(body);
  if (!j.ok()) return j.error;
  return ParseCompletionRequest(j.value, kTestVocab, kTestCtx);
}

}  // namespace pg::testing
