// GLM-4.5 tool-call arguments as grammar nodes: the pairs
//   <arg_key>K</arg_key>\n<arg_value>V</arg_value>\n
// that follow "NAME\n" inside <tool_call>...</tool_call> (GLM-4.5, 4.6),
// written so that src/chat's GLM parser (tool_call_stream.h) reads them back
// as arguments valid under the tool's `parameters` schema:
//   - the keys are the schema's `properties`, in the order written; every
//     required one appears, an optional one may be left out; a required key
//     missing from `properties` takes any raw value.
//   - a parameter the parser reads as a string (its schema's `type` is
//     "string", or an array holding "string"): V is raw text holding no
//     "</arg_value>" or "</tool_call>", within minLength / maxLength; with
//     `enum` / `const`, one of their string values, raw.
//   - any other parameter: V is one JSON value valid under its schema
//     (json_schema_grammar.h). A top-level null is left out of the value's
//     types (the parser reads the text "null" as a string); a parameter
//     that can only be null is refused if required, skipped if optional.
//     JSON strings in V never hold a raw '<' (GrammarBuilder's
//     set_string_forbidden, which the caller sets for the whole grammar).
//   - no `properties` and additionalProperties not false, or `constrain`
//     false (a non-strict tool under tool_choice auto): any number of pairs,
//     keys of 1..64 characters without '<' or '>', values raw text.
//
// Known gaps: property names or enum strings that themselves hold
// "</arg_value>" or "</tool_call>"; a null inside anyOf alternatives or
// behind $ref at the top of a parameter.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "constrain/grammar.h"

namespace pg {

// The pairs of one call's arguments; `parameters` null = any object.
Result<NodeId> AddGlmArguments(const nlohmann::ordered_json& parameters, bool constrain, const std::string& where,
                               GrammarBuilder* b);

}  // namespace pg
