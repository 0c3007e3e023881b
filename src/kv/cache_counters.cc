#include "kv/cache_counters.h"

#include <fmt/format.h>

#include "base/units.h"

namespace pg {

std::string CacheCounters::Report() const {
  std::string out = fmt::format("kv cache: {} lookups, {} prompt tokens, {} reused ({:.1f}%), {} index entries\n", lookups,
                                lookup_tokens, reused_tokens, lookup_tokens ? 100.0 * double(reused_tokens) / double(lookup_tokens) : 0.0,
                                index_entries);
  auto line = [&](const char* name, const TierCounters& t) {
    out += fmt::format(
        "  {:<6} hits {} blk ({} tok)  misses {} blk  in {}  out {}  evict {}  promote {}  demote {}  errors {}  "
        "used {}/{} blk ({} cached, {} pinned)\n",
        name, t.hit_blocks, t.hit_tokens, t.miss_blocks, FormatBytes(uint64_t(t.bytes_in)), FormatBytes(uint64_t(t.bytes_out)),
        t.evictions, t.promotions, t.demotions, t.errors, t.used_blocks, t.capacity_blocks, t.cached_blocks,
        t.pinned_blocks);
  };
  line("device", device);
  line("host", host);
  line("disk", disk);
  if (skipped_short_hits || failed_loads || disk_writes_disabled) {
    out += fmt::format("  short hits skipped {}  failed loads {}  disk writes {}\n", skipped_short_hits, failed_loads,
                       disk_writes_disabled ? "STOPPED" : "on");
  }
  return out;
}

}  // namespace pg
