// ToolCallFormat: how a model writes tool calls in its output, and which one
// a chat template implies.
//
//   kHermes       <tool_call>{"name": N, "arguments": {...}}</tool_call>
//                 (Qwen 2.5/3, Hermes, the ChatML fallback template); a bare
//                 JSON call {"name": N, "arguments"|"parameters": {...}} as the
//                 whole output is accepted too (other JSON streams as content).
//   kLlama3Json   the whole output is {"name": N, "parameters": {...}},
//                 optionally after <|python_tag|> (Llama 3.1 / 3.2 / 3.3).
//   kGlm45        <tool_call>N\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>
//                 ...</tool_call> (GLM-4.5, 4.6 and later); V is JSON unless
//                 the tool's schema types K as a string or V is not JSON.
//   kDeepSeekV3   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N
//                 \n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
//                 (DeepSeek-V3, R1).
//   kDeepSeekV31  the same section, each call <｜tool▁call▁begin｜>N<｜tool▁sep｜>
//                 {...}<｜tool▁call▁end｜> (DeepSeek-V3.1).
//
// DetectToolCallFormat looks for each format's markers in the template text:
// "<arg_key>" -> kGlm45; "<｜tool▁calls▁begin｜>" -> kDeepSeekV3 when the
// template also writes "```json", else kDeepSeekV31; "<tool_call>" ->
// kHermes; "<|python_tag|>" or "<|start_header_id|>" -> kLlama3Json. A
// template with none of them (or no template) gets the default, kHermes.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

namespace pg {

enum class ToolCallFormat { kHermes, kLlama3Json, kGlm45, kDeepSeekV3, kDeepSeekV31 };

inline constexpr ToolCallFormat kDefaultToolCallFormat = ToolCallFormat::kHermes;

ToolCallFormat DetectToolCallFormat(std::string_view chat_template);

// "hermes", "llama3_json", "glm45", "deepseek_v3", "deepseek_v31".
const char* ToolCallFormatName(ToolCallFormat format);

// The literal markers of a format (tags the model writes around calls). A
// tokenizer may hold them as control tokens, which decoding would otherwise
// drop; the server renders those tokens when tools are offered.
std::vector<std::string_view> ToolCallMarkers(ToolCallFormat format);

}  // namespace pg
