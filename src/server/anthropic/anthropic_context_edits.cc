#include "server/anthropic/anthropic_context_edits.h"

#include <fmt/format.h>

#include <limits>

#include "server/common/api_error.h"
#include "server/core/json_string_at.h"
#include "server/core/known_keys.h"

namespace pg {
namespace {

using ojson = nlohmann::ordered_json;

ApiError Bad(const std::string& param, const std::string& why) { return BadRequest(param + ": " + why, param); }

// keep: "all" | {"type": "thinking_turns", "value": N >= 0}; *turns = -1 for all.
std::optional<ApiError> ReadKeep(const ojson& edit, const std::string& where, int64_t* turns) {
  *turns = 1;
  auto keep = edit.find("keep");
  if (keep == edit.end() || keep->is_null()) return std::nullopt;
  if (*keep == "all") {
    *turns = -1;
    return std::nullopt;
  }
  if (!keep->is_object() || StringAt(*keep, "type") != "thinking_turns" || !keep->contains("value") ||
      !(*keep)["value"].is_number_integer() || (*keep)["value"].get<int64_t>() < 0) {
    return Bad(where + ".keep", "must be \"all\" or {\"type\": \"thinking_turns\", \"value\": N}");
  }
  *turns = (*keep)["value"].get<int64_t>();
  return std::nullopt;
}

int64_t ClearThinking(ojson* messages, int64_t keep) {
  if (keep < 0) return 0;
  int64_t kept = 0, cleared = 0;
  for (auto it = messages->rbegin(); it != messages->rend(); ++it) {
    if (!it->contains("reasoning_content")) continue;
    if (kept < keep) {
      ++kept;
    } else {
      it->erase("reasoning_content");
      ++cleared;
    }
  }
  return cleared;
}

}  // namespace

std::optional<ApiError> ApplyContextManagement(const ojson& cm, ojson* messages, nlohmann::json* applied) {
  *applied = nlohmann::json::array();
  if (cm.is_null()) return std::nullopt;
  if (!cm.is_object()) return Bad("context_management", "must be an object");
  if (auto e = UnknownKey(cm, {"edits"}, "context_management")) return e;
  auto edits = cm.find("edits");
  if (edits == cm.end() || edits->is_null()) return std::nullopt;
  if (!edits->is_array()) return Bad("context_management.edits", "must be an array");
  for (size_t i = 0; i < edits->size(); ++i) {
    const ojson& edit = (*edits)[i];
    const std::string where = fmt::format("context_management.edits[{}]", i);
    const std::string type = StringAt(edit, "type");
    if (type != "clear_thinking_20251015") {
      return BadRequest(fmt::format("{}.type: '{}' is not supported by this server (only clear_thinking_20251015); "
                                    "send the request without it",
                                    where, type),
                        where + ".type", "unsupported_parameter");
    }
    if (auto e = UnknownKey(edit, {"type", "keep"}, where)) return e;
    int64_t keep = 1;
    if (std::optional<ApiError> e = ReadKeep(edit, where, &keep)) return e;
    applied->push_back({{"type", type}, {"cleared_thinking_turns", ClearThinking(messages, keep)}});
  }
  return std::nullopt;
}

}  // namespace pg
