#include "server/core/known_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "server/common/api_error.h"

namespace pg {

std::optional<ApiError> UnknownKey(const nlohmann::ordered_json& obj, std::initializer_list<const char*> known,
                                   const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    if (it->is_null() || std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return BadRequest(fmt::format("{}.{}: unknown field ({} has {})", where, key, where, list), where + "." + key,
                      "unknown_parameter");
  }
  return std::nullopt;
}

}  // namespace pg
