#include "kv/accounting/miss_accounting.h"

#include <algorithm>

#include "base/clock.h"

namespace pg {

void MissAccounting::Configure(const Config& c) {
  cfg_ = c;
  if (!cfg_.clock) cfg_.clock = [] { return NowSeconds(); };
  const uint64_t bb = std::max<uint64_t>(1, c.block_bytes);
  const uint64_t fb = c.disk_file_bytes ? c.disk_file_bytes : bb;
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < kWhatIfSizes; ++k) {
      const double bytes = kWhatIfGiB[k] * double(uint64_t(1) << 30);
      extra_blocks_[t * kWhatIfSizes + k] = int64_t(bytes / double(kWhatIfTiers[t] == kDiskTier ? fb : bb));
    }
  int64_t cap = c.ghost_blocks;
  if (cap < 0)
    cap = std::clamp<int64_t>(*std::max_element(extra_blocks_, extra_blocks_ + kWhatIfPoints), 1024, 1 << 18);
  ghost_ = GhostIndex(cap);
}

void MissAccounting::NotePublished(const BlockHash& hash, const BlockHash& parent) {
  const uint64_t fp = Fingerprint(hash);
  history_.NotePublished(fp, Fingerprint(parent));
  ghost_.Forget(fp);
}

void MissAccounting::NoteEvicted(int tier, const BlockHash& hash) {
  ghost_.NoteEvicted(tier, Fingerprint(hash), cfg_.clock());
}

// The ghost that "more of tier t" would have kept: the tier's own evictions,
// or, when the tier is off, those of the lowest tier above it.
int MissAccounting::GhostTierFor(int whatif_tier) const { return cfg_.tiers.lowest_at_or_above(whatif_tier); }

MissAccounting::Status MissAccounting::StatusOf(const PrefixIndex& index, const BlockHash& h,
                                                std::span<const int32_t> block, int* tier, double* evicted_at) const {
  const uint32_t id = index.Find(h);
  if (id != PrefixIndex::kNone) {
    const IndexEntry& e = index.at(id);
    if (!std::equal(block.begin(), block.end(), e.tokens.begin(), e.tokens.end())) return Status::kUnknown;
    if (e.first_usable() != kNoTier) {
      // A device copy still loading for another sequence stops Match even
      // when a lower copy exists.
      return (e.copy(kDeviceTier).slot >= 0 && !e.copy(kDeviceTier).ready) ? Status::kNotReady : Status::kPresent;
    }
    return Status::kNotReady;  // only a copy in flight (a disk write)
  }
  const uint64_t fp = Fingerprint(h);
  uint64_t last = 0;  // the latest eviction record names the tier it left last
  for (int t = 0; t < GhostIndex::kTiers; ++t) {
    GhostIndex::Record r;
    if (ghost_.Find(t, fp, &r) && r.stamp > last) {
      last = r.stamp;
      *tier = t;
      *evicted_at = r.evicted_at_s;
    }
  }
  if (last > 0) return Status::kEvicted;
  if (history_.Seen(fp)) {
    *tier = cfg_.tiers.lowest();  // seen, but no tier remembers it: it left the lowest last
    *evicted_at = -1;
    return Status::kEvicted;
  }
  return Status::kUnknown;
}

MissExplanation MissAccounting::Explain(const PrefixIndex& index, const BlockHash& root,
                                        std::span<const uint32_t> matched, std::span<const int32_t> tokens,
                                        MatchStop stop,
                                        const std::function<bool(const BlockHash&)>& dropped_by_policy) const {
  MissExplanation x;
  x.valid = true;
  const int64_t page = cfg_.page_tokens, n = int64_t(tokens.size());
  x.prompt_tokens = n;
  x.matched_tokens = int64_t(matched.size()) * page;
  MissCounts& m = x.miss;
  if (stop == MatchStop::kNoCache) {
    m.policy = n - x.matched_tokens;
    return x;
  }
  const int64_t full = n / page, max_blocks = n > 0 ? (n - 1) / page : 0;
  m.never_seen = n - full * page;  // the partial last block is never published
  const int64_t f = int64_t(matched.size());
  BlockHash parent = f > 0 ? index.at(matched.back()).hash : root;
  const double now = cfg_.clock();
  Why first = Why::kNever;
  bool run[kWhatIfPoints];
  std::fill(run, run + kWhatIfPoints, true);
  for (int64_t i = f; i < full; ++i) {
    auto block = tokens.subspan(size_t(i * page), size_t(page));
    const BlockHash h = ChainHash(parent, block, cfg_.hash_key);
    int tier = kDeviceTier;
    double at = -1;
    const Status st = StatusOf(index, h, block, &tier, &at);
    Why why = ReasonOf(st, i == f ? nullptr : &first, index, parent, f);
    if (i == f && (why == Why::kEvicted || why == Why::kNever || why == Why::kDiverged) && dropped_by_policy &&
        dropped_by_policy(h))
      why = Why::kPolicy;
    if (i == f) first = why;
    switch (why) {
      case Why::kNever: m.never_seen += page; break;
      case Why::kEvicted:
        m.evicted[tier] += page;
        if (m.evicted_age_s < 0 && at >= 0) m.evicted_age_s = std::max(0.0, now - at);
        break;
      case Why::kDiverged: m.diverged += page; break;
      case Why::kLoading: m.loading += page; break;
      case Why::kPolicy: m.policy += page; break;
    }
    if (i < max_blocks) ExtendWhatIf(st, h, i == f, run, &x);
    parent = h;
  }
  return x;
}

// The reason of one block past the match from its status; `first` is the
// reason of the first missing block, null for that block itself (the f-th).
MissAccounting::Why MissAccounting::ReasonOf(Status st, const Why* first, const PrefixIndex& index,
                                             const BlockHash& parent, int64_t f) const {
  switch (st) {
    case Status::kPresent: return first == nullptr ? Why::kPolicy : *first;
    case Status::kNotReady: return Why::kLoading;
    case Status::kEvicted: return Why::kEvicted;
    default: break;
  }
  if (first != nullptr) return *first == Why::kDiverged ? Why::kDiverged : Why::kNever;
  const bool other_child = index.children_any(parent) > 0 || history_.HadChild(Fingerprint(parent));
  return (f >= 1 && other_child) ? Why::kDiverged : Why::kNever;
}

// Block after block from the first miss: each what-if point's run of would-be
// hits goes on while the block is present (past the first) or remembered by
// that point's ghost within its extra blocks.
void MissAccounting::ExtendWhatIf(Status st, const BlockHash& h, bool first_miss, bool* run, MissExplanation* x) const {
  for (int p = 0; p < kWhatIfPoints; ++p) {
    if (!run[p]) continue;
    GhostIndex::Record r;
    const bool hit =
        (!first_miss && st == Status::kPresent) ||
        (st == Status::kEvicted && ghost_.Find(GhostTierFor(kWhatIfTiers[p / kWhatIfSizes]), Fingerprint(h), &r) &&
         r.rank < extra_blocks_[p]);
    if (hit)
      x->would_hit[p] += cfg_.page_tokens;
    else
      run[p] = false;
  }
}

void MissAccounting::Count(const MissExplanation& x) {
  if (!x.valid) return;
  totals_.never_seen += x.miss.never_seen;
  for (int t = 0; t < kLocalTiers; ++t) totals_.evicted[t] += x.miss.evicted[t];
  totals_.diverged += x.miss.diverged;
  totals_.loading += x.miss.loading;
  totals_.policy += x.miss.policy;
  totals_.prompt_tokens += x.prompt_tokens;
  totals_.cached_tokens += x.matched_tokens;
  for (int p = 0; p < kWhatIfPoints; ++p) would_hit_[p] += x.would_hit[p];
}

void MissAccounting::CountFailedLoads(int64_t tokens) {
  totals_.cached_tokens -= tokens;
  totals_.loading += tokens;
}

void MissAccounting::Fill(CacheCounters* c) const {
  c->miss = totals_;
  for (int p = 0; p < kWhatIfPoints; ++p) {
    const int t = kWhatIfTiers[p / kWhatIfSizes];
    c->whatif[size_t(p)] = {TierName(t), kWhatIfGiB[p % kWhatIfSizes], extra_blocks_[p],
                            totals_.cached_tokens + would_hit_[p]};
  }
  for (int t = 0; t < GhostIndex::kTiers; ++t) c->ghost_blocks[t] = ghost_.size(t);
}

}  // namespace pg
