// ParseJsonBody: the first step of every dialect's request parsing. Pure
// function; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/bounded_json.h"
#include "server/common/api_error.h"

namespace pg {

// Parses a request body: it must be valid UTF-8 and a JSON object nested no
// deeper than `max_depth` (checked while parsing, so nothing recurses on it).
ApiResult<nlohmann::ordered_json> ParseJsonBody(const std::string& body, int max_depth = kDefaultMaxJsonDepth);

}  // namespace pg
