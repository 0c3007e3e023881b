// The literal markers models write around tool calls, spelled once for the
// modules that read them (src/chat: format detection and the parser) and
// the one that writes them (src/constrain: the grammars of forced calls).
// Which format uses which is src/chat/tool_call_format.h's to say.
#pragma once

#include <string_view>

namespace pg::tool_markers {

// Hermes / Qwen (and GLM-4.5's call tags).
inline constexpr std::string_view kCallOpen = "<tool_call>";
inline constexpr std::string_view kCallClose = "</tool_call>";
// Llama 3.1: an optional tag before a bare JSON call.
inline constexpr std::string_view kPythonTag = "<|python_tag|>";
inline constexpr std::string_view kLlamaHeader = "<|start_header_id|>";  // a Llama-3 template's turns
// GLM-4.5 arguments.
inline constexpr std::string_view kArgKey = "<arg_key>";
inline constexpr std::string_view kArgKeyEnd = "</arg_key>";
inline constexpr std::string_view kArgValue = "<arg_value>";
inline constexpr std::string_view kArgValueEnd = "</arg_value>";
// DeepSeek-V3 / V3.1.
inline constexpr std::string_view kDsCallsBegin = "<｜tool▁calls▁begin｜>";
inline constexpr std::string_view kDsCallsEnd = "<｜tool▁calls▁end｜>";
inline constexpr std::string_view kDsCallBegin = "<｜tool▁call▁begin｜>";
inline constexpr std::string_view kDsCallEnd = "<｜tool▁call▁end｜>";
inline constexpr std::string_view kDsSep = "<｜tool▁sep｜>";
inline constexpr std::string_view kDsJsonFence = "```json";  // DeepSeek-V3's arguments block

}  // namespace pg::tool_markers
