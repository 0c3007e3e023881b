#include "server/core/response_id.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>

namespace pg {

std::string NewResponseId(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  uint64_t a = rng() ^ counter.fetch_add(1);
  return fmt::format("{}{:016x}{:08x}", prefix, a, static_cast<uint32_t>(rng()));
}

}  // namespace pg
