// EvictionPolicy: which cached block a tier gives up when it needs room, and
// the cost model behind that choice. Two implementations:
//   LruEviction        the oldest evictable block goes;
//   CostAwareEviction  the block whose loss costs least goes (reload cost
//                      after eviction, weighted by reuse and recency), and a
//                      chain's tail goes before its middle.
// Both keep retained sessions' blocks (SessionRetention) until nothing else
// is left, and both look only at the kCandidates oldest evictable blocks of
// the tier (the index's eviction order: oldest use, then deepest block).
// A third wraps either one:
//   FairShareEviction  takes the session furthest above its fair share of
//                      the tier first (SessionUsage), then ranks as the inner
//                      policy does; it looks further down the order
//                      (kFairShareCandidates).
//
// Block holds (SessionRetention::HoldOf, from KV hints) rank before all else:
//   kSession   (session deadline) evicted only when nothing unheld is left;
//   kRetained  never evicted from host or disk; on the device it goes after
//              every unheld and session-held block (it is demoted, so it
//              normally stays cached one tier down);
//   kPinned    the same, and on the device after retained blocks too.
// A device copy is never excluded, so the device can always make room for a
// running sequence (CanAllocate counts every evictable device block).
// Blocks a hold excludes do not count towards the candidate window.
//
// A policy is stateless: it reads the index and the context it is given, so
// a test can build a PrefixIndex by hand and ask it.
// Thread-safety: const methods only; called on the scheduler thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "kv/accounting/session_usage.h"
#include "kv/index/prefix_index.h"
#include "kv/policy/session_retention.h"
#include "kv/tier_table.h"

namespace pg {

// What a policy sees of the cache when it ranks blocks.
struct EvictionContext {
  const PrefixIndex& index;
  const SessionRetention& retention;
  int page_tokens;
  TierTable tiers;                      // where an evicted copy goes (TierStore::tiers)
  const SessionUsage* usage = nullptr;  // per-session blocks (fair share); null = not tracked
};

class EvictionPolicy {
 public:
  // Victims are chosen among this many oldest evictable blocks of a tier.
  static constexpr int kCandidates = 64;
  // Most blocks that holds exclude skipped past per pick (beyond the window).
  static constexpr int kMaxHeldSkip = 1 << 16;

  virtual ~EvictionPolicy() = default;
  virtual const char* name() const = 0;

  // The entry to evict from `tier` now, or PrefixIndex::kNone when the tier
  // has no evictable block. need_clean: skip blocks that would first have to
  // be copied to a lower tier (a "dirty" copy).
  uint32_t PickVictim(int tier, bool need_clean, const EvictionContext& ctx) const;

  // True when the copy of `e` in `tier` must be copied down before it goes:
  // the tier below takes copies and has no ready copy of e yet.
  static bool Dirty(const IndexEntry& e, int tier, const EvictionContext& ctx);
  // True when `hold` forbids evicting e's copy in `tier` at all.
  static bool HoldExcludes(BlockHold hold, const IndexEntry& e, int tier);

 protected:
  // Smaller goes first; retention is compared before both fields.
  struct Rank {
    int breaks_chain = 0;
    double value = 0;
  };
  // Rank of candidate `e` found at position `age_rank` (0 = oldest).
  virtual Rank RankOf(const IndexEntry& e, int tier, int age_rank, double now, const EvictionContext& ctx) const = 0;
  // True when the oldest unretained candidate always wins (the scan stops there).
  virtual bool oldest_wins() const = 0;
  // Size of the candidate window.
  virtual int candidates() const { return kCandidates; }
  // A session whose blocks go before every other session's (-1 = none).
  virtual int32_t Preferred(int /*tier*/, const EvictionContext& /*ctx*/) const { return -1; }

 private:
  friend class FairShareEviction;
};

class LruEviction final : public EvictionPolicy {
 public:
  const char* name() const override { return "lru"; }

 protected:
  Rank RankOf(const IndexEntry&, int, int age_rank, double, const EvictionContext&) const override {
    return Rank{0, double(age_rank)};
  }
  bool oldest_wins() const override { return true; }
};

class CostAwareEviction final : public EvictionPolicy {
 public:
  // Relative reload costs per token (recompute of one token at position 0 = 1).
  static constexpr double kHostReloadPerToken = 0.02;
  static constexpr double kDiskReloadPerToken = 0.1;
  // The same per local tier (the device's copy is the one the kernels read).
  static constexpr std::array<double, kLocalTiers> kReloadPerToken{0, kHostReloadPerToken, kDiskReloadPerToken};
  // Position at which attention doubles the per-token recompute cost.
  static constexpr double kAttentionTokens = 2048;
  // Ages are measured against this half-weight time (seconds).
  static constexpr double kRecencyScaleS = 60;

  const char* name() const override { return "cost"; }

  // Cost of recomputing block `depth` of a sequence: page * (1 + mid position / kAttentionTokens).
  static double RecomputeCost(int32_t depth, int page_tokens);
  // Cost of getting the block back into the device after dropping its copy in
  // `tier`: from the highest other tier that holds it or that the copy goes
  // down to, else recompute (-1).
  static double ReloadAfterEviction(const IndexEntry& e, int tier, const EvictionContext& ctx);

 protected:
  Rank RankOf(const IndexEntry& e, int tier, int age_rank, double now, const EvictionContext& ctx) const override;
  bool oldest_wins() const override { return false; }
};

// Fair share of a tier: capacity / sessions holding blocks there. While one
// session holds more than that, its blocks go first (ranked by the inner
// policy among themselves); otherwise the inner policy decides alone. Needs
// ctx.usage (without it, it is the inner policy).
class FairShareEviction final : public EvictionPolicy {
 public:
  // How far down the eviction order it looks for the heaviest session's blocks.
  static constexpr int kFairShareCandidates = 4096;

  explicit FairShareEviction(std::unique_ptr<EvictionPolicy> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return "fair"; }
  const EvictionPolicy& inner() const { return *inner_; }

 protected:
  Rank RankOf(const IndexEntry& e, int tier, int age_rank, double now, const EvictionContext& ctx) const override {
    return inner_->RankOf(e, tier, age_rank, now, ctx);
  }
  bool oldest_wins() const override { return false; }
  int candidates() const override { return kFairShareCandidates; }
  int32_t Preferred(int tier, const EvictionContext& ctx) const override;

 private:
  std::unique_ptr<EvictionPolicy> inner_;
};

}  // namespace pg
