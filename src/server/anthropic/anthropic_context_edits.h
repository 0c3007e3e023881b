// Anthropic's context_management edits (beta context-management-2025-06-27),
// executed on the converted conversation before it is rendered:
//
//   {"edits": [{"type": "clear_thinking_20251015",
//               "keep": "all" | {"type": "thinking_turns", "value": N}}]}
//     Drops the reasoning (thinking blocks, AnthropicRequest messages'
//     reasoning_content) of all but the last N assistant turns that carry
//     some (N = 1 when keep is absent; "all" clears nothing). What the
//     template renders changes from the first cleared turn on, so the KV of
//     the old prompt is reused only up to there: prosgrow never writes
//     thinking blocks itself, so this happens only to histories that carry
//     them, and the usage's cache split shows the effect.
//   {"type": "clear_tool_uses_20250919", ...}
//     Not executed: a 400 that names it (the client then sends the request
//     without it, or clears the results itself).
//
// The applied edits ({"type", "cleared_thinking_turns"}) are returned for
// the response header and log. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "server/common/api_error.h"

namespace pg {

// `messages` are the converted chat messages (modified in place); *applied
// receives one object per edit executed.
std::optional<ApiError> ApplyContextManagement(const nlohmann::ordered_json& context_management,
                                               nlohmann::ordered_json* messages, nlohmann::json* applied);

}  // namespace pg
