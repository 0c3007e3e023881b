// BoundedJson: JSON parsing for bytes that come from outside (request bodies,
// tool-call arguments, model output). Nesting depth is counted while parsing,
// through nlohmann-json's SAX interface, so a body such as [[[[...]]]] 100,000
// levels deep is refused before any tree is built: nothing downstream (copy,
// dump, template rendering), all of which recurse once per level, ever sees
// a tree deeper than the limit. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pg {

// Deepest nesting accepted by default: an object or array at the top level is
// depth 1. Real requests (messages -> content parts -> tool schemas) stay well
// under 20.
inline constexpr int kDefaultMaxJsonDepth = 64;

struct JsonParseError {
  enum class Kind { kNone, kSyntax, kTooDeep } kind = Kind::kNone;
  std::string message;  // "" when kind == kNone
};

// Parses `text` into *out. On failure *out is discarded and the error says
// why: kTooDeep names the limit, kSyntax carries the parser's position.
JsonParseError ParseBoundedJson(std::string_view text, int max_depth, nlohmann::ordered_json* out);
JsonParseError ParseBoundedJson(std::string_view text, int max_depth, nlohmann::json* out);

// Convenience for callers that only want the value or "discarded".
nlohmann::ordered_json ParseBoundedOrDiscard(std::string_view text, int max_depth = kDefaultMaxJsonDepth);

}  // namespace pg
