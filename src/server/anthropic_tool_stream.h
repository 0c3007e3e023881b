// ToolTextGate: which text of a streamed message with tools can be sent
// while it is generated. Tool calls are parsed from the whole text at the
// end (chat/tool_call_parser.h), so text that may belong to a call is held:
//   - everything from the first "<tool_call>" on, and a tail that could
//     still become "<tool_call>";
//   - everything, when the first non-space character is '{' or the text
//     starts with "<|python_tag|>" (a bare-JSON call, Llama 3.1 style).
// The rest streams at once. Remainder() gives what is left to send once the
// parsed content is known: without calls, exactly the unsent text (so the
// streamed text equals the message's); with calls, the content past what was
// sent (the parser trims the content, so whitespace that was sent before a
// call may differ from the non-streamed message).
//
// Not thread-safe; one per stream.
#pragma once

#include <string>

namespace pg {

class ToolTextGate {
 public:
  // Appends generated text; returns the part that can be sent now.
  std::string Push(const std::string& text);
  // All text pushed so far.
  const std::string& text() const { return text_; }
  // What to send at the end, given the parsed content and whether calls were found.
  std::string Remainder(const std::string& content, bool had_calls) const;

 private:
  std::string text_;
  size_t sent_ = 0;     // bytes of text_ released
  bool held_ = false;   // a call started (or may have): release nothing more
};

}  // namespace pg
