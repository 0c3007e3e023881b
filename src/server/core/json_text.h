// JSON text as every dialect writes it: one line, invalid UTF-8 in strings
// replaced by U+FFFD instead of throwing, and the Server-Sent Events frame
// that carries one event's data. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pg {

// One-line JSON; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string DumpJson(const nlohmann::json& value);

// SSE framing: "data: <json>\n\n".
std::string SseEvent(const std::string& payload);

}  // namespace pg
