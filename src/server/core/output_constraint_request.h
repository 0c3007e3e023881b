// BuildOutputConstraint: the grammar a chat request's output must follow,
// from its response_format and tool_choice, compiled for the model's
// tokenizer (src/constrain) and cached (ConstraintCache::Global(), keyed by
// the canonical request text and the vocabulary's fingerprint).
//
//   tool_choice "required"       one call to any offered tool (several when
//                                parallel_tool_calls and the format allows),
//                                arguments valid under the tool's parameters
//   tool_choice {function: NAME} one call to NAME (400 when NAME is not in tools)
//   response_format json_object  one JSON object
//   response_format json_schema  one value valid under the schema (also
//                                llama.cpp's, vLLM's, Responses' and
//                                Anthropic's schema fields)
//   vLLM's choice                exactly one of its strings
//   tool_choice "auto" with any tool marked "strict": true
//                                free text, but once the model opens a call
//                                (the format's begin tag) the call must be
//                                well formed: strict tools' arguments follow
//                                their parameters, the others' are any object
//   otherwise                    no constraint (null)
// The call format is the one src/chat's parser reads for the chat template
// (DetectToolCallFormat, src/chat/tool_call_format.h): Qwen/Hermes
// <tool_call>{"name", "arguments"}</tool_call>, Llama 3's bare JSON
// ({"name", "parameters"}), GLM-4.5's <arg_key>/<arg_value> pairs, or
// DeepSeek-V3's / V3.1's <｜tool▁calls▁begin｜> section (ToolCallGrammarFormatFor;
// src/constrain/output_grammar.h shows each). A forced tool_choice together
// with a JSON response_format is a 400 (they cannot both hold); under
// tool_choice auto, response_format wins and strict tools are not enforced.
//
// `api.tools` is read in OpenAI's shape ({"type": "function", "function":
// {"name", "parameters", "strict"}}), so another front end (Anthropic's
// tool_choice any / tool) fills ApiRequest's tools, tool_choice and
// tool_choice_name in that shape and calls this too.
//
// Errors are 400s naming the field: an unsupported schema keyword has code
// "unsupported_parameter" and names the keyword and where it is.
//
// Thread-safety: callable from any HTTP thread concurrently.
#pragma once

#include <memory>
#include <string>

#include "constrain/constraint.h"
#include "constrain/output_grammar.h"
#include "server/common/api_error.h"
#include "server/core/request.h"

namespace pg {

class Tokenizer;

// The tool-call grammar format for a model with `chat_template`.
ToolCallGrammarFormat ToolCallGrammarFormatFor(const std::string& chat_template);

ApiResult<std::shared_ptr<const CompiledConstraint>> BuildOutputConstraint(const ApiRequest& api,
                                                                           const Tokenizer& tokenizer,
                                                                           const std::string& chat_template);

}  // namespace pg
