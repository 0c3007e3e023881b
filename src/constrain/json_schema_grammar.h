// JSON schema -> grammar nodes (the subset structured outputs need).
//
// Supported, with what each means for the generated text:
//   type                 "object" | "array" | "string" | "number" | "integer" |
//                        "boolean" | "null", or an array of these (any one)
//   properties           keys are written in the schema's order; each
//   required             required key always appears, an optional one may be
//                        left out; a key in `required` but not in
//                        `properties` is written with any JSON value
//   additionalProperties false, true or absent: only the declared keys are
//                        ever written (an instance of all three). An object
//                        schema with no `properties` and additionalProperties
//                        not false is any JSON object.
//   items, minItems, maxItems
//   minLength, maxLength (strings: characters, i.e. code points; an escape
//                        such as \n or \u00e9 is one)
//   enum, const          (on any type) exactly one of the listed JSON values,
//                        written compactly
//   anyOf                any one alternative
//   $ref                 "#/$defs/NAME" or "#/definitions/NAME"; recursion is
//                        allowed, bounded at match time (GrammarMatcher)
//   annotations          title, description, default, examples, $schema,
//                        $id, $comment, $defs, definitions: ignored
// A schema of `true` or `{}` is any JSON value. An integer is written without
// fraction or exponent; a number has at most 24 characters. Any other keyword
// (pattern, format, oneOf, allOf, not, minimum, ...) is an error
// naming it: Status Unimplemented, message "unsupported JSON schema keyword
// 'KEY' at PATH". A malformed schema is InvalidArgument.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "constrain/grammar.h"

namespace pg {

// Adds the grammar of one JSON value valid under `schema` to *builder
// (followed by nothing: no surrounding whitespace) and returns its node.
// `where` names the schema in messages (e.g. "response_format.json_schema.schema").
Result<NodeId> AddJsonSchema(const nlohmann::ordered_json& schema, const std::string& where, GrammarBuilder* builder);
// The same for `sub`, a part of `root` (its `$ref`s resolve in root's
// $defs / definitions); `path` names it in messages.
Result<NodeId> AddJsonSubschema(const nlohmann::ordered_json& root, const nlohmann::ordered_json& sub,
                                const std::string& path, const std::string& where, GrammarBuilder* builder);

}  // namespace pg
