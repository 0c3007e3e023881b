// Grammars for what a request asks its output to be: a JSON object, a value
// valid under a JSON schema, one of fixed strings, or tool calls.
//
// A tool-call format is pieces of literal text around one JSON value:
//   calls_begin ( begin CALL end )+ calls_end
// where CALL is either the object {"name": NAME, ARGS_KEY: ARGUMENTS}
// (args_key set) or name_prefix NAME name_suffix ARGUMENTS (args_key empty:
// the name outside the JSON), or, for GLM, name_prefix NAME name_suffix
// and key/value pairs (glm_arguments_grammar.h). A new format (another model
// family's tags) is a new ToolCallGrammarFormat value; the grammar around it
// does not change. The formats here, one per src/chat ToolCallFormat:
//   Hermes      <tool_call>{"name": ..., "arguments": {...}}</tool_call>
//               (Qwen, Hermes, the default template; whitespace allowed
//               around the object, so the usual newlines fit)
//   Llama3Json  {"name": ..., "parameters": {...}} as the whole output
//   DeepSeekV3  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//               \n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
//   DeepSeekV31 <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}
//               <｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
//   Glm45       <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n
//               ...</tool_call> (GLM-4.5, 4.6)
// Each is what src/chat/tool_call_stream.h parses for that format (tested by
// random walks through the grammar, tool_call_grammar_test.cc); the server
// picks the format of the model's chat template (output_constraint_request.h).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "constrain/grammar.h"

namespace pg {

struct ToolCallGrammarFormat {
  std::string name;  // for messages
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
  // The arguments are GLM <arg_key>/<arg_value> pairs, not a JSON object
  // (args_key must be "").
  bool key_value_args = false;

  const std::string& trigger() const { return calls_begin.empty() ? begin : calls_begin; }

  static ToolCallGrammarFormat Hermes();
  static ToolCallGrammarFormat Llama3Json();
  static ToolCallGrammarFormat DeepSeekV3();
  static ToolCallGrammarFormat DeepSeekV31();
  static ToolCallGrammarFormat Glm45();
};

struct ToolGrammarOptions {
  std::string name;
  // The function's `parameters` schema; null = any JSON object.
  nlohmann::ordered_json parameters;
  // Constrain the arguments by `parameters` (false: any JSON object).
  bool constrain_arguments = true;
};

// Any JSON object (response_format json_object), whitespace allowed before it.
Grammar JsonObjectGrammar();
// Exactly one of `choices`, byte for byte (vLLM's structured_outputs choice):
// raw text, not a JSON string. `choices` must not be empty.
Grammar ChoiceGrammar(const std::vector<std::string>& choices);
// One JSON value valid under `schema` (response_format json_schema).
Result<Grammar> JsonSchemaGrammar(const nlohmann::ordered_json& schema, const std::string& where);

// tool_choice "required" / named: the output is one call (or, with
// `parallel` and a format that allows it, several) to one of `tools`.
// tool_choice "auto" with strict tools (`lazy`): free text, and wherever the
// format's trigger appears, a call to one of `tools` must follow.
// `where` names the request field in schema errors.
Result<Grammar> ToolCallGrammar(const ToolCallGrammarFormat& format, const std::vector<ToolGrammarOptions>& tools,
                                bool parallel, bool lazy, const std::string& where);

}  // namespace pg
