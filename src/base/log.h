// Minimal leveled logging to stderr. Thread-safe (one write per line).
// Level from PROSGROW_LOG=debug|info|warn|error (default info).
#pragma once

#include <fmt/format.h>

#include <string>

namespace pg {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);
void LogLine(LogLevel level, const std::string& line);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (level < CurrentLogLevel()) return;
  LogLine(level, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace pg

#define PG_LOG_DEBUG(...) ::pg::Log(::pg::LogLevel::kDebug, __VA_ARGS__)
#define PG_LOG_INFO(...) ::pg::Log(::pg::LogLevel::kInfo, __VA_ARGS__)
#define PG_LOG_WARN(...) ::pg::Log(::pg::LogLevel::kWarn, __VA_ARGS__)
#define PG_LOG_ERROR(...) ::pg::Log(::pg::LogLevel::kError, __VA_ARGS__)
