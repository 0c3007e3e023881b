#include "server/core/request.h"

#include <set>

#include "server/core/json_string_at.h"

namespace pg {

using json = nlohmann::ordered_json;

std::optional<OrphanToolResult> FirstOrphanToolResult(const nlohmann::ordered_json& messages) {
  std::set<std::string> calls;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    auto tool_calls = m.find("tool_calls");
    if (tool_calls != m.end() && tool_calls->is_array()) {
      for (const json& c : *tool_calls) {
        if (!c.contains("id") || !c["id"].is_string()) return std::nullopt;  // nothing to match against
        calls.insert(c["id"].get<std::string>());
      }
    }
    if (StringAt(m, "role") != "tool") continue;
    const std::string id = StringAt(m, "tool_call_id");
    if (!calls.count(id)) return OrphanToolResult{i, id};
  }
  return std::nullopt;
}

}  // namespace pg
