#include "server/anthropic_tool_stream.h"

#include <algorithm>
#include <string_view>

namespace pg {
namespace {

constexpr std::string_view kToolCall = "<tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Length of the longest suffix of `s` that is a proper prefix of `tag`.
size_t PartialTagSuffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

std::string ToolTextGate::Push(const std::string& text) {
  text_ += text;
  if (held_) return "";
  const size_t first = text_.find_first_not_of(" \n\t\r");
  if (first == std::string::npos) return "";  // only whitespace so far: cannot tell yet
  std::string_view start = std::string_view(text_).substr(first);
  if (start[0] == '{' || start.substr(0, kPythonTag.size()) == kPythonTag) {
    held_ = true;
    return "";
  }
  if (kPythonTag.substr(0, start.size()) == start) return "";  // may still become <|python_tag|>
  size_t end = text_.find(kToolCall, sent_ > 0 ? sent_ - std::min(sent_, kToolCall.size()) : 0);
  if (end != std::string::npos) {
    held_ = true;
  } else {
    end = text_.size() - PartialTagSuffix(text_, kToolCall);
  }
  end = std::max(end, sent_);
  // Trailing whitespace waits: the parser trims it before a call.
  while (end > sent_ && IsSpace(text_[end - 1])) --end;
  std::string out = text_.substr(sent_, end - sent_);
  sent_ = end;
  return out;
}

std::string ToolTextGate::Remainder(const std::string& content, bool had_calls) const {
  if (!had_calls) return text_.substr(sent_);
  std::string_view sent(text_.data(), sent_);
  sent.remove_prefix(std::min(sent.size(), sent.find_first_not_of(" \n\t\r")));
  if (content.compare(0, sent.size(), sent) != 0) return "";
  return content.substr(sent.size());
}

}  // namespace pg
