// The pieces of each tool-call format that ToolCallStream recognises on
// text held so far: call headers (the part before the arguments object),
// whole JSON calls, and GLM argument values. Internal to src/chat.
//
// A header matcher answers kYes (the header is complete; *args_at is the
// offset of the arguments' "{" in `s`, or for GLM the offset just after the
// name), kMore (`s` is a prefix of a possible header: wait for more text) or
// kNo (this is not a call header).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace pg {

enum class HeaderMatch { kYes, kMore, kNo };

// {"name": "N", "arguments"|"parameters": {     (Hermes, bare JSON)
HeaderMatch MatchJsonHeader(std::string_view s, std::string* name, size_t* args_at);
// function<｜tool▁sep｜>N\n```json\n{          (DeepSeek-V3, after <｜tool▁call▁begin｜>)
HeaderMatch MatchDeepSeekV3Header(std::string_view s, std::string* name, size_t* args_at);
// N<｜tool▁sep｜>{                              (DeepSeek-V3.1)
HeaderMatch MatchDeepSeekV31Header(std::string_view s, std::string* name, size_t* args_at);
// N followed by a newline or "<"               (GLM-4.5, after <tool_call>)
HeaderMatch MatchGlmHeader(std::string_view s, std::string* name, size_t* args_at);

struct JsonCall {
  std::string name;
  std::string arguments_json;  // compact JSON object
};
// A JSON object {"name": non-empty string, "arguments"|"parameters": object
// or a JSON string holding an object (absent = {})}; nullopt otherwise.
std::optional<JsonCall> CallFromJson(std::string_view text);

// A GLM <arg_value> as JSON text: a JSON string when the tool's schema types
// the parameter as a string (or the value is not JSON), else the value
// parsed as JSON. `tools` is the request's OpenAI tools array (or null).
std::string GlmValueJson(const nlohmann::ordered_json& tools, const std::string& function, const std::string& key,
                         std::string_view value);

// The tool's schema types parameter `key` of `function` as a string.
bool IsStringParam(const nlohmann::ordered_json& tools, const std::string& function, const std::string& key);
// `text` as the inside of a JSON string (escaped, no quotes).
std::string JsonStringBody(std::string_view text);

bool IsJsonSpace(char c);
std::string_view TrimJsonSpace(std::string_view s);

}  // namespace pg
