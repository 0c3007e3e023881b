// Grammars for what a request asks its output to be: a JSON object, a value
// valid under a JSON schema, or tool calls.
//
// A tool-call format is pieces of literal text around one JSON value:
//   calls_begin ( begin CALL end )+ calls_end
// where CALL is either the object {"name": NAME, ARGS_KEY: ARGUMENTS}
// (args_key set) or name_prefix NAME name_suffix ARGUMENTS (args_key empty:
// the name outside the JSON). A new format (another model family's tags) is
// a new ToolCallFormat value; the grammar around it does not change.
// The formats here:
//   Hermes      <tool_call>{"name": ..., "arguments": {...}}</tool_call>
//               (Qwen, Hermes, the default template; whitespace allowed
//               around the object, so the usual newlines fit)
//   Llama3Json  {"name": ..., "parameters": {...}} as the whole output
//   DeepSeekV3  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//               ```json {...} ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// The first two are what src/chat/tool_call_parser.h reads back today and
// what the server picks (output_constraint_request.h); DeepSeekV3 is ready
// for when that parser reads it.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "constrain/grammar.h"

namespace pg {

struct ToolCallFormat {
  std::string name;       // for messages
  // Literal text before each call; under tool_choice auto the appearance of
  // calls_begin (or of begin, when calls_begin is "") starts the calls
  // ("" for both = the format cannot be triggered).
  std::string begin;
  std::string end;          // literal text after each call
  std::string args_key;     // "arguments" / "parameters"; "" = name outside the JSON
  bool multiple = true;     // several calls may follow one another (whitespace between)
  std::string name_prefix;  // args_key "": before the name
  std::string name_suffix;  // args_key "": between the name and the arguments
  std::string calls_begin;  // around all the calls
  std::string calls_end;

  const std::string& trigger() const { return calls_begin.empty() ? begin : calls_begin; }

  static ToolCallFormat Hermes();
  static ToolCallFormat Llama3Json();
  static ToolCallFormat DeepSeekV3();
};

struct ToolGrammarSpec {
  std::string name;
  // The function's `parameters` schema; null = any JSON object.
  nlohmann::ordered_json parameters;
  // Constrain the arguments by `parameters` (false: any JSON object).
  bool constrain_arguments = true;
};

// Any JSON object (response_format json_object), whitespace allowed before it.
Grammar JsonObjectGrammar();
// One JSON value valid under `schema` (response_format json_schema).
Result<Grammar> JsonSchemaGrammar(const nlohmann::ordered_json& schema, const std::string& where);

// tool_choice "required" / named: the output is one call (or, with
// `parallel` and a format that allows it, several) to one of `tools`.
// tool_choice "auto" with strict tools (`lazy`): free text, and wherever the
// format's trigger appears, a call to one of `tools` must follow.
// `where` names the request field in schema errors.
Result<Grammar> ToolCallGrammar(const ToolCallFormat& format, const std::vector<ToolGrammarSpec>& tools, bool parallel,
                                bool lazy, const std::string& where);

}  // namespace pg
