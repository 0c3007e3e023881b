// UnknownKey: the check that an object inside a request holds only the keys
// its API defines, shared by every dialect (OpenAI chat and completions,
// Responses, Anthropic Messages). The first other key is a 400 naming it:
//
//   message  "<where>.<key>: unknown field (<where> has a, b, c)"
//   param    "<where>.<key>"
//   code     "unknown_parameter"
//
// A key whose value is null counts as absent, as every top-level field does
// (FieldReader): {"stream_options": {"x": null}} passes, {"x": 1} does not.
//
// Thread-safety: a pure function.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/common/api_error.h"

namespace pg {

std::optional<ApiError> UnknownKey(const nlohmann::ordered_json& obj, std::initializer_list<const char*> known,
                                   const std::string& where);

}  // namespace pg
