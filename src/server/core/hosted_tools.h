// Hosted tools: the tool types of OpenAI's APIs that the provider (or its
// client, for the built-in shell and patch tools) runs instead of the model's
// caller defining them as functions: web_search, file_search,
// code_interpreter, image_generation, computer use, remote MCP, the local
// shell ... This server runs none of them. A declaration of one in `tools`
// is accepted and not offered to the model (ApiRequest::skipped_tools names
// it; the request's log line and /metrics count it), so clients that declare
// them by default (Codex CLI's web_search) work unchanged. A tool_choice that
// forces one stays a 400: the model cannot call it.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace pg {

// True for a hosted tool type ("web_search", "web_search_preview_2025_03_11",
// "image_generation", ...); false for "function", "namespace" and unknown types.
bool IsHostedToolType(std::string_view type);

}  // namespace pg
