#include "server/core/json_text.h"

namespace pg {

std::string SseEvent(const std::string& payload) { return "data: " + payload + "\n\n"; }

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pg
