// SequenceTable::TruncateSequence: the rollback of a sequence's tail (the
// rejected positions of a speculative verification). Kept apart from
// sequence_table.cc; same thread contract (scheduler thread only).
#include <fmt/format.h>

#include "base/check.h"
#include "kv/sequence_table.h"

namespace pg {

Status SequenceTable::TruncateSequence(SeqId id, int64_t n_tokens, std::vector<BlockId>* table) {
  ProcessCompletions();
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "TruncateSequence: unknown sequence");
  Seq& s = it->second;
  if (!s.settled) return InvalidArgument("TruncateSequence before PromotionReady");
  if (n_tokens < 0 || n_tokens > s.n_tokens)
    return InvalidArgument(fmt::format("TruncateSequence: {} tokens outside [0, {}]", n_tokens, s.n_tokens));
  const int64_t keep = BlocksFor(n_tokens);
  // Committed (published) and matched blocks hold verified tokens that the
  // index serves to others: they are never cut.
  if (keep < int64_t(s.hashes.size()) || n_tokens < int64_t(s.hashes.size()) * page_)
    return InvalidArgument(
        fmt::format("TruncateSequence: {} tokens would cut one of the {} published blocks", n_tokens, s.hashes.size()));
  while (int64_t(s.table.size()) > keep) {
    const int32_t slot = s.table.back();
    PG_CHECK(store_.device().owner(slot) < 0);  // private: never published
    s.table.pop_back();
    store_.device().arena().CloseForKernels(slot);
    store_.Unref(kDeviceTier, slot);
  }
  s.n_tokens = n_tokens;
  *table = s.table;
  return Status::Ok();
}

}  // namespace pg
