#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pg {
namespace {

LogLevel LevelFromEnv() {
  const char* e = std::getenv("PROSGROW_LOG");
  if (!e) return LogLevel::kInfo;
  if (!std::strcmp(e, "debug")) return LogLevel::kDebug;
  if (!std::strcmp(e, "warn")) return LogLevel::kWarn;
  if (!std::strcmp(e, "error")) return LogLevel::kError;
  if (!std::strcmp(e, "off")) return LogLevel::kOff;
  return LogLevel::kInfo;
}

std::atomic<int> g_level{static_cast<int>(LevelFromEnv())};

}  // namespace

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }
void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

void LogLine(LogLevel level, const std::string& line) {
  static const char* kNames[] = {"debug", "info", "warn", "error", "off"};
  std::string out = std::string("[") + kNames[static_cast<int>(level)] + "] " + line + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace pg
