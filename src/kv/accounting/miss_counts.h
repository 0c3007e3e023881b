// MissCounts: why the tokens of one prompt were not served from the KV cache
// (docs/kv-cache.md, "Miss reasons"). Plain value types.
//
// Every prompt token that is not cached gets exactly one reason, so
//   never_seen + evicted[device] + evicted[host] + evicted[disk]
//     + diverged + loading + policy == prompt tokens - cached tokens.
#pragma once

#include <cstdint>

#include "base/kv_tier.h"

namespace pg {

struct MissCounts {
  int64_t never_seen = 0;             // no tier ever held the block (as far as BlockHistory remembers)
  int64_t evicted[kLocalTiers] = {};  // held and dropped; by the tier it left last (indexed by Tier)
  int64_t diverged = 0;               // the prefix matched, then this block differs from a child of the same parent
  int64_t loading = 0;                // present in a tier, but its copy was not ready (in flight, or the load failed)
  int64_t policy = 0;                 // present, skipped by a rule: short hits, the last-token rule, a quota, cache off
  double evicted_age_s = -1;          // seconds since the first evicted block of the prompt was dropped; -1 = none

  int64_t evicted_total() const {
    int64_t n = 0;
    for (int64_t e : evicted) n += e;
    return n;
  }
  int64_t total() const { return never_seen + evicted_total() + diverged + loading + policy; }
};

// Why Match stopped before the end of the chain while the next block was
// still present in a tier.
enum class MatchStop : uint8_t {
  kNone,      // the chain ended (or the len - 1 rule stopped it)
  kShortHit,  // host/disk part below min_promote_tokens: recomputed
  kPolicy,    // cut by a policy hook (KvCacheManager::Impl::LimitMatch)
  kNoCache,   // the prefix cache is off (server-wide or for this request)
};

// What-if points: extra capacity of a tier, in GiB.
inline constexpr double kWhatIfGiB[] = {1, 2, 4};
inline constexpr int kWhatIfSizes = 3;
inline constexpr int kWhatIfTiers[] = {kHostTier, kDiskTier};
inline constexpr int kWhatIfPoints = 2 * kWhatIfSizes;  // index: tier slot * kWhatIfSizes + size slot

// The classification of one match, computed by KvCacheManager::ExplainMisses
// and counted in the totals when the match is allocated.
struct MissExplanation {
  bool valid = false;
  MissCounts miss;
  int64_t prompt_tokens = 0;
  int64_t matched_tokens = 0;
  int64_t would_hit[kWhatIfPoints] = {};  // tokens past the match that each what-if point would have served
};

}  // namespace pg
