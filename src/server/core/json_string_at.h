// Lenient reads of request JSON the parsers have already shape-checked.
// Internal to src/server. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pg {

// obj[key] when it is a string, else `fallback` (json::value throws on other types).
inline std::string StringAt(const nlohmann::ordered_json& obj, const char* key, const char* fallback = "") {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace pg
