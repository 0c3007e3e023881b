#include "chat/tool_call_parser.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "base/bounded_json.h"

namespace pg {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// A JSON object {"name": str, "arguments"|"parameters": object or JSON
// string of an object (absent = {})} -> a call; anything else -> nullopt.
std::optional<ParsedToolCall> CallFromJson(std::string_view text) {
  nlohmann::ordered_json j = ParseBoundedOrDiscard(text);
  if (!j.is_object()) return std::nullopt;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return std::nullopt;
  auto args = j.find("arguments");
  if (args == j.end()) args = j.find("parameters");
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  if (args != j.end()) {
    if (args->is_string()) {
      const std::string& s = args->get_ref<const std::string&>();
      obj = ParseBoundedOrDiscard(s);
    } else {
      obj = *args;
    }
    if (!obj.is_object()) return std::nullopt;
  }
  ParsedToolCall call;
  call.name = name->get<std::string>();
  call.arguments_json = obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return call;
}

}  // namespace

ParsedAssistant ParseToolCalls(std::string_view generated, const ToolCallParseOptions& opt) {
  ParsedAssistant out;
  std::string content;
  size_t pos = 0;
  bool saw_tag = false;
  while (pos < generated.size()) {
    size_t open = generated.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    saw_tag = true;
    size_t body = open + kOpen.size();
    size_t close = generated.find(kClose, body);
    if (close == std::string_view::npos) break;  // unterminated: stays in content
    std::optional<ParsedToolCall> call = CallFromJson(Trim(generated.substr(body, close - body)));
    size_t end = close + kClose.size();
    if (call) {
      content.append(generated.substr(pos, open - pos));
      out.tool_calls.push_back(std::move(*call));
    } else {
      content.append(generated.substr(pos, end - pos));
    }
    pos = end;
  }
  content.append(generated.substr(std::min(pos, generated.size())));

  if (!saw_tag && opt.bare_json) {
    std::string_view whole = Trim(generated);
    if (whole.substr(0, kPythonTag.size()) == kPythonTag) whole = Trim(whole.substr(kPythonTag.size()));
    if (!whole.empty() && whole.front() == '{') {
      if (std::optional<ParsedToolCall> call = CallFromJson(whole)) {
        out.tool_calls.push_back(std::move(*call));
        return out;
      }
    }
  }
  out.content = std::string(Trim(content));
  return out;
}

}  // namespace pg
