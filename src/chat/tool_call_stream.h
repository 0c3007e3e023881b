// ToolCallStream: incremental tool-call parsing of generated text, for every
// ToolCallFormat (tool_call_format.h).
//
// Feed the text as it is generated (pieces of any size, split anywhere) with
// Push(), then call Finish() once. Each call appends events:
//
//   kContent    text that is certainly not part of a tool call (only a
//               possible marker prefix, or a call not yet recognisable, is
//               held back); leading and trailing whitespace of the content
//               as a whole is dropped, whitespace between parts is kept.
//   kCallStart  a call begins: `index` (0, 1, ...) and `text` = the name.
//   kArguments  a fragment of that call's arguments JSON (whitespace outside
//               strings removed); the fragments of one call concatenate to
//               its arguments object.
//   kCallEnd    that call is over. `text` is "" when the model closed its
//               arguments; when the text ended inside them (Finish while a
//               call is open: max_tokens), `text` is what would close them
//               into a JSON object, and the kArguments before it are the
//               arguments as far as they got.
//
// The events depend only on the text, never on how it was split: the
// concatenation of what Push/Finish emit for any split equals what one Push
// of the whole text plus Finish emits. ParseToolCalls (tool_call_parser.h)
// is exactly that one-shot use, so streamed and non-streamed responses agree.
//
// When is text a call? A call is started (kCallStart) as soon as its name and
// the start of a well-formed arguments object are seen. Before that, anything
// that does not fit the format (bad JSON, a missing name, an arguments value
// that is not an object, an unterminated block at Finish) is released as
// content, byte for byte. A call that has started stays a call: if its text
// breaks off (markup inside the arguments), its arguments end there,
// completed into valid JSON (json_stream_scanner.h); if the text stops at
// Finish (max_tokens) inside them, the kArguments are what was generated and
// kCallEnd's `text` holds the completion. Arguments + completion always parse
// as a JSON object. GLM arguments go
// out one pair at a time, except values the tool's schema types as strings,
// which stream as they are generated.
//
// Thread-safety: one stream per response, used by one thread at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/json_stream_scanner.h"
#include "chat/tool_call_format.h"

namespace pg {

struct ToolCallEvent {
  enum class Kind { kContent, kCallStart, kArguments, kCallEnd };
  Kind kind = Kind::kContent;
  int index = -1;    // the call's number (0-based) for call events, -1 for content
  std::string text;  // content, the function name (kCallStart) or an arguments fragment
};

class ToolCallStream {
 public:
  // `tools`: the request's OpenAI tools array (or null), used to type GLM
  // argument values by their schema. `bare_json`: kHermes also accepts a
  // whole-output JSON call (kLlama3Json always does).
  explicit ToolCallStream(ToolCallFormat format, nlohmann::ordered_json tools = nullptr, bool bare_json = true);

  void Push(std::string_view piece, std::vector<ToolCallEvent>* events);
  // End of the text: releases what was held back. Push after Finish is a bug.
  void Finish(std::vector<ToolCallEvent>* events);

  ToolCallFormat format() const { return format_; }
  int calls_started() const { return calls_; }

 private:
  enum class Mode {
    kText,       // content; looking for a call's opening marker
    kSection,    // DeepSeek: inside <｜tool▁calls▁begin｜>, between calls
    kHeader,     // after an opening marker: waiting for the name and "{"
    kArgs,       // streaming the arguments object
    kTrailer,    // after the arguments: skipping to the closing marker
    kWhole,      // a block that may still be a call: held to its closing marker
    kGlmArgs,    // GLM: <arg_key>/<arg_value> pairs
    kGlmString,  // GLM: inside a string-typed <arg_value>, streamed as it comes
  };
  bool Step(bool final);
  bool StepText(bool final);
  bool StepSection(bool final);
  bool StepHeader(bool final);
  bool StepArgs();
  bool StepTrailer(bool final);
  bool StepWhole(bool final);
  bool StepGlmArgs(bool final);
  bool StepGlmString(bool final);
  bool StartGlmString(std::string_view rest);  // a string-typed pair's value begins

  void EmitContent(std::string_view text);
  void StartCall(std::string name);
  void EmitArgs(std::string_view fragment);
  void EndCall(bool to_section, bool cut = false);  // cut: the text ended inside the arguments
  void BlockIsContent(bool to_section);             // the held block was not a call
  std::string_view CloseMarker() const;

  ToolCallFormat format_;
  nlohmann::ordered_json tools_;
  bool bare_json_;
  std::vector<ToolCallEvent>* out_ = nullptr;

  Mode mode_ = Mode::kText;
  std::string buf_;       // text received and not yet consumed
  bool at_start_ = true;  // nothing but whitespace seen so far
  bool content_started_ = false;
  std::string held_ws_;       // trailing whitespace of the content so far
  bool bare_ = false;         // the current block is a whole-output JSON call
  bool in_section_ = false;   // DeepSeek: the current block sits in a section
  std::string raw_;           // the current block's text so far (for BlockIsContent)
  size_t whole_scanned_ = 0;  // kWhole: bytes of buf_ already searched for the closing marker
  int calls_ = 0;
  // kArgs: the arguments' scanner; json_args_ while its call is open.
  JsonStreamScanner scanner_;
  bool json_args_ = false;
  // kGlmArgs: pairs written so far, and the function's name.
  int glm_pairs_ = 0;
  std::string glm_name_;
  std::string glm_closing_;  // a string value cut at Finish: its closing quote
};

}  // namespace pg
