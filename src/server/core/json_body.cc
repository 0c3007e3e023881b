#include "server/core/json_body.h"

#include <fmt/format.h>

#include "base/utf8.h"
#include "server/common/api_error.h"

namespace pg {

using json = nlohmann::ordered_json;

ApiResult<nlohmann::ordered_json> ParseJsonBody(const std::string& body, int max_depth) {
  if (!IsValidUtf8(body)) return BadRequest("request body is not valid UTF-8", "", "invalid_utf8");
  json parsed;
  JsonParseError e = ParseBoundedJson(body, max_depth, &parsed);
  if (e.kind == JsonParseError::Kind::kTooDeep) {
    return BadRequest(fmt::format("request body {} (limit: --max-json-depth)", e.message), "", "json_too_deep");
  }
  if (e.kind != JsonParseError::Kind::kNone) {
    return BadRequest(fmt::format("request body is not valid JSON: {}", e.message), "", "invalid_json");
  }
  if (!parsed.is_object()) {
    return BadRequest(fmt::format("request body must be a JSON object, got {}", JsonTypeName(parsed)), "",
                      "invalid_type");
  }
  return parsed;
}

}  // namespace pg
