// SequenceTable::CheckIntegrity: the sequence table against the tiers.
// The holders of every slot are recomputed from the block tables and the
// moves in flight; TierStore checks the rest.
#include <fmt/format.h>

#include "kv/sequence_table.h"

namespace pg {

Status SequenceTable::CheckIntegrity(int64_t match_locks) const {
  const SlotTier& dev = store_.device();
  std::vector<int32_t> dev_refs(size_t(dev.capacity()), 0);
  std::vector<int32_t> host_refs(size_t(store_.host().capacity()), 0);
  int64_t loading_locks = 0;
  for (const auto& [id, s] : seqs_) {
    if (int64_t(s.table.size()) != BlocksFor(s.n_tokens)) {
      return Internal(fmt::format("seq {}: {} blocks for {} tokens", id, s.table.size(), s.n_tokens));
    }
    if (s.hashes.size() > s.table.size() || s.matched.size() > s.hashes.size() ||
        s.matched.size() != s.matched_tier.size()) {
      return Internal(fmt::format("seq {}: inconsistent chain bookkeeping", id));
    }
    if (s.settled == bool(unsettled_.count(id))) return Internal(fmt::format("seq {}: settled flag disagrees", id));
    if (s.settled && !s.loading.empty()) return Internal(fmt::format("seq {}: settled with loads", id));
    for (size_t i = 0; i < s.table.size(); ++i) {
      const int32_t slot = s.table[i];
      if (slot < 0 || slot >= dev.capacity()) return Internal(fmt::format("seq {}: bad slot {}", id, slot));
      dev_refs[size_t(slot)]++;
      for (size_t j = 0; j < i; ++j)
        if (s.table[j] == slot) return Internal(fmt::format("seq {}: slot {} twice in its table", id, slot));
    }
    if (s.settled) {
      for (size_t i = 0; i < s.matched.size(); ++i) {
        // Matched blocks read from the index: same slot as the entry's device copy, or a private one.
        const int32_t owner = dev.owner(s.table[i]);
        if (owner >= 0 && store_.index().at(uint32_t(owner)).hash != s.hashes[i]) {
          return Internal(fmt::format("seq {}: block {} holds another block's data", id, i));
        }
      }
    }
    loading_locks += int64_t(s.loading.size());
  }
  mover_.CountPins(dev_refs, host_refs);
  return store_.CheckIntegrity(dev_refs, host_refs, match_locks + loading_locks);
}

}  // namespace pg
