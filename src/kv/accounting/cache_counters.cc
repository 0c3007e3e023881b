#include "kv/accounting/cache_counters.h"

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
  if (miss.prompt_tokens > 0) {
    out += fmt::format(
        "  misses by reason (tokens): never_seen {}  evicted {} (device {}, host {}, disk {})  diverged {}  loading {}  "
        "policy {}\n",
        miss.never_seen, miss.evicted[0] + miss.evicted[1] + miss.evicted[2], miss.evicted[0], miss.evicted[1],
        miss.evicted[2], miss.diverged, miss.loading, miss.policy);
    out += fmt::format("  hit ratio {:.3f}", hit_ratio());
    for (const WhatIfPoint& p : whatif)
      if (*p.tier) out += fmt::format("  +{}GiB {} {:.3f}", p.extra_gib, p.tier, whatif_ratio(p));
    out += "\n";
  }
  return out;
}

std::string CacheCounters::WhatIfMetricsText() const {
  std::string o =
      "# HELP prosgrow_kv_whatif_hit_ratio Prompt tokens that would be served from the KV cache with extra_gib more "
      "of the tier, estimated from evicted-block ghosts (extra_gib=\"0\": measured), over admitted requests.\n"
      "# TYPE prosgrow_kv_whatif_hit_ratio gauge\n";
  for (const char* tier : {"host", "disk"}) o += fmt::format("prosgrow_kv_whatif_hit_ratio{{tier=\"{}\",extra_gib=\"0\"}} {}\n", tier, hit_ratio());
  for (const WhatIfPoint& p : whatif)
    if (*p.tier) o += fmt::format("prosgrow_kv_whatif_hit_ratio{{tier=\"{}\",extra_gib=\"{}\"}} {}\n", p.tier, p.extra_gib, whatif_ratio(p));
  o += "# HELP prosgrow_kv_whatif_extra_blocks Blocks of the tier that extra_gib stands for.\n"
       "# TYPE prosgrow_kv_whatif_extra_blocks gauge\n";
  for (const WhatIfPoint& p : whatif)
    if (*p.tier) o += fmt::format("prosgrow_kv_whatif_extra_blocks{{tier=\"{}\",extra_gib=\"{}\"}} {}\n", p.tier, p.extra_gib, p.extra_blocks);
  o += "# HELP prosgrow_kv_ghost_blocks Evicted blocks remembered for the what-if estimate, by the tier they left.\n"
       "# TYPE prosgrow_kv_ghost_blocks gauge\n";
  const char* names[] = {"device", "host", "disk"};
  for (int t = 0; t < 3; ++t) o += fmt::format("prosgrow_kv_ghost_blocks{{tier=\"{}\"}} {}\n", names[t], ghost_blocks[t]);
  return o;
}

}  // namespace pg
