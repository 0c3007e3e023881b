// OpenAI response bodies: chat.completion / text_completion objects, their
// streaming chunks, usage and logprobs, built from GenerationRunner output.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/core/cache_usage_json.h"
#include "server/core/generation_output.h"
#include "server/core/generation_runner.h"
#include "server/core/json_text.h"
#include "server/core/response_id.h"

namespace pg {

// Identity shared by every chunk of one response.
struct ResponseHeader {
  bool chat = true;
  std::string id;  // "chatcmpl-..." / "cmpl-..."
  std::string model;
  int64_t created = 0;  // unix seconds
};

// {"prompt_tokens", "completion_tokens", "total_tokens",
//  "prompt_tokens_details": {"cached_tokens", "cached_tokens_by_tier": {device, host, disk}}}
nlohmann::json UsageJson(const GenerationResult& result);
// (prompt_tokens_details carries core/cache_usage_json.h's miss reasons.)

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}.
nlohmann::json ChatLogprobsJson(const std::vector<TokenEvent>& tokens, const Tokenizer& tok);
// Completions: {"tokens", "token_logprobs", "top_logprobs": [{piece: lp}], "text_offset"};
// text_offset starts at *offset (bytes of completion text so far) and advances it.
nlohmann::json CompletionLogprobsJson(const std::vector<TokenEvent>& tokens, const Tokenizer& tok, int64_t* offset);

// A whole non-streaming response. `logprobs` is null when not requested.
nlohmann::json FullResponseJson(const ResponseHeader& h, const std::string& text,
                                const std::vector<ToolCall>& tool_calls, const std::string& finish_reason,
                                const nlohmann::json& logprobs, const GenerationResult& result);

// One streaming chunk with a single choice. For chat, `delta` is the delta
// object; for completions its "content" member is used as "text".
// finish_reason "" = null. with_usage_null adds "usage": null (when the
// client asked for include_usage).
nlohmann::json ChunkJson(const ResponseHeader& h, const nlohmann::json& delta, const std::string& finish_reason,
                         const nlohmann::json& logprobs, bool with_usage_null);
// The final include_usage chunk: "choices": [] and the usage.
nlohmann::json UsageChunkJson(const ResponseHeader& h, const GenerationResult& result);

// Tool calls as they appear in a message / a streaming delta (with "index").
nlohmann::json ToolCallsJson(const std::vector<ToolCall>& calls, bool with_index);

// Speculative decoding (issue 15; a prosgrow extension, docs/speculative.md).
// usage["speculative"] = {"steps", "drafted_tokens", "accepted_tokens",
// "acceptance_rate", "mean_accepted_length", "synthetic_acceptance"}.
nlohmann::json SpecUsageJson(const SpecUsage& spec);
// Adds usage["speculative"] when speculation verified a draft or synthetic
// acceptance is on; leaves other usage objects as they are.
void AddSpecUsage(nlohmann::json* usage, const SpecUsage& spec);
// Fields for the /v1/models entry: {"speculative": "ngram,suffix" | null,
// "synthetic_acceptance": bool, "synthetic_acceptance_length": L (when on)}.
nlohmann::json SpeculativeModelJson(const ServiceInfo& info);
// Response header on every /v1 response while synthetic acceptance is on:
// its value says the output is not the model's own.
inline constexpr const char* kSyntheticAcceptanceHeader = "X-Prosgrow-Synthetic-Acceptance";
std::string SyntheticAcceptanceHeaderValue(const ServiceInfo& info);  // "" when off

}  // namespace pg
