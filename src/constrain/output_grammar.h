// Grammars for what a request asks its output to be: a JSON object, a value
// valid under a JSON schema, or tool calls.
//
// A tool-call format is pieces: literal text, one JSON object
// {"name": NAME, ARGS_KEY: ARGUMENTS}, literal text (ToolCallFormat). A new
// format (another model family's tags) is a new ToolCallFormat value; the
// grammar around it does not change. The formats here are the ones
// src/chat/tool_call_parser.h reads back:
//   Hermes      <tool_call>{"name": ..., "arguments": {...}}</tool_call>
//               (Qwen, Hermes, the default template; whitespace allowed
//               around the object, so the usual newlines fit)
//   Llama3Json  {"name": ..., "parameters": {...}} as the whole output
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
  // Literal text before the call object; under tool_choice auto its
  // appearance starts a call ("" = the format cannot be triggered).
  std::string begin;
  std::string end;        // literal text after it
  std::string args_key;   // "arguments" or "parameters"
  bool multiple = true;   // several calls may follow one another (whitespace between)

  static ToolCallFormat Hermes();
  static ToolCallFormat Llama3Json();
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
