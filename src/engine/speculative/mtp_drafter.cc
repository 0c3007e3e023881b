#include "engine/speculative/mtp_drafter.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/log.h"
#include "engine/speculative/drafter_kv.h"

namespace pg {
namespace {

constexpr size_t kNoRow = DraftBatch::kNoRow;

}  // namespace

Result<std::unique_ptr<MtpDrafter>> MtpDrafter::Create(const Model& target) {
  auto block = NextnBlock::Of(target);
  if (!block.ok()) return InvalidArgument("--spec mtp: " + block.status().message());
  return std::unique_ptr<MtpDrafter>(new MtpDrafter(target, std::move(*block)));
}

KvLayout MtpDrafter::Layout(int page_tokens, KvDtype dtype) const {
  return block_.config().KvLayoutFor(page_tokens, dtype);
}

Status MtpDrafter::CreateKv(uint64_t device_bytes, int page_tokens, KvDtype dtype) {
  PG_ASSIGN_OR_RETURN(
      kv_, CreateDrafterKv(Layout(page_tokens, dtype), target_.identity() + ":mtp", device_bytes, "MTP KV", &pages_));
  return Status::Ok();
}

int64_t MtpDrafter::Pending(const Seq& s) const {
  return static_cast<int64_t>(s.pending.size()) / block_.config().n_embd;
}

bool MtpDrafter::Reserve(SeqId id, Seq& s, int64_t tokens) {
  return ReserveDrafterBlocks(*kv_, id, tokens, &s.allocated, &s.table);
}

void MtpDrafter::Truncate(SeqId id, Seq& s, int64_t n) {
  if (n < static_cast<int64_t>(s.inputs.size())) s.inputs.resize(static_cast<size_t>(n));
  s.true_len = std::min(s.true_len, n);
  TruncateDrafterBlocks(*kv_, id, n, s.allocated, &s.table);
}

int64_t MtpDrafter::PendingRows(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : Pending(it->second);
}

void MtpDrafter::Observe(SeqId seq, int64_t start, int64_t n, const float* rows) {
  const int64_t D = block_.config().n_embd;
  Seq& s = seqs_[seq];
  if (start < s.true_len) Truncate(seq, s, start);  // recomputed positions: what the block made of them goes
  if (s.pending.empty() || start < s.hid_pos) {
    s.pending.clear();
    s.hid_pos = start;  // positions before it without rows (a prefix-cache hit) count as zeros
  }
  // Rows from `start` on are replaced; a gap inside the rows is zeros.
  s.pending.resize(static_cast<size_t>((start - s.hid_pos) * D), 0.0f);
  s.pending.insert(s.pending.end(), rows, rows + n * D);
}

void MtpDrafter::Prepare(SeqId id, Seq& s, std::span<const int32_t> context) {
  const int64_t n = static_cast<int64_t>(context.size());
  int64_t keep = std::min<int64_t>(s.true_len, n - 1);
  for (int64_t j = 0; j < keep; ++j)
    if (s.inputs[static_cast<size_t>(j)] != context[static_cast<size_t>(j + 1)]) keep = j;
  Truncate(id, s, keep);  // the last chain goes (and any entry whose token changed)
  // The trunk's K/V covers [0, n - 1): rows past it were rejected drafts'.
  const int64_t D = block_.config().n_embd;
  const int64_t valid = std::max<int64_t>(0, n - 1 - s.hid_pos);
  if (Pending(s) > valid) s.pending.resize(static_cast<size_t>(valid * D));
}

void MtpDrafter::Retain(std::span<const SeqId> live) { RetainDrafterSeqs(*kv_, seqs_, live); }

void MtpDrafter::Free(SeqId seq) { FreeDrafterSeq(*kv_, seqs_, seq); }

void MtpDrafter::Propose(std::span<DraftRequest> requests, ThreadPool& pool, int64_t catchup_budget) {
  kv_->Tick();
  for (DraftRequest& r : requests) {
    r.out->clear();
    r.out->reserve(static_cast<size_t>(std::max(r.want, 1)));  // chain entries point into it
    Prepare(r.id, seqs_[r.id], r.context);
  }
  auto behind = [&](size_t i) {
    return static_cast<int64_t>(requests[i].context.size()) - 1 - seqs_[requests[i].id].true_len;
  };
  CatchUpOrder(requests.size(), behind, &order_);
  batch_.clear();
  hidden_in_.clear();
  int64_t budget = catchup_budget;
  for (size_t i : order_) {
    DraftRequest& r = requests[i];
    Seq& s = seqs_[r.id];
    const int64_t m = s.true_len, missing = behind(i), chunk = std::min(missing, budget);
    if (chunk <= 0) continue;
    const bool drafts = r.want > 0 && chunk == missing;
    if (!Reserve(r.id, s, m + chunk + (drafts ? r.want - 1 : 0))) {
      ++no_room_;
      continue;
    }
    budget -= chunk;
    TakeRows(s, chunk);
    batch_.Add(r.context.data() + m + 1, chunk, m, s.table, drafts ? i : kNoRow);
    s.inputs.insert(s.inputs.end(), r.context.begin() + m + 1, r.context.begin() + m + 1 + chunk);
    s.true_len += chunk;
  }
  while (!batch_.empty())
    if (!Step(requests, pool)) return;
}

// Positions [true_len, true_len + chunk)'s rows into hidden_in_ (zeros where
// the trunk handed none over); the rows taken leave pending.
void MtpDrafter::TakeRows(Seq& s, int64_t chunk) {
  const int64_t D = block_.config().n_embd, m = s.true_len, end = m + chunk;
  const int64_t zeros = std::clamp<int64_t>(s.hid_pos - m, 0, chunk);
  hidden_in_.resize(hidden_in_.size() + static_cast<size_t>(zeros * D), 0.0f);
  const int64_t from = std::max<int64_t>(0, m - s.hid_pos);  // rows before true_len are stale
  const int64_t upto = std::clamp<int64_t>(end - s.hid_pos, 0, Pending(s));
  if (upto > from) hidden_in_.insert(hidden_in_.end(), s.pending.begin() + from * D, s.pending.begin() + upto * D);
  const int64_t got = zeros + std::max<int64_t>(0, upto - from);
  hidden_in_.resize(hidden_in_.size() + static_cast<size_t>((chunk - got) * D), 0.0f);
  s.pending.erase(s.pending.begin(), s.pending.begin() + std::max<int64_t>(upto, 0) * D);
  s.hid_pos = std::max(s.hid_pos + std::max<int64_t>(upto, 0), end);
  if (s.pending.empty()) s.hid_pos = end;
}

bool MtpDrafter::Step(std::span<DraftRequest> requests, ThreadPool& pool) {
  const int64_t D = block_.config().n_embd, V = block_.config().n_vocab;
  int64_t n_tok = 0, n_logits = 0;
  for (const BatchSeq& b : batch_.seqs) {
    n_tok += b.n_tokens;
    n_logits += b.logit_rows();
  }
  hidden_out_.resize(static_cast<size_t>(n_tok * D));
  if (logits_.size() < static_cast<size_t>(n_logits * V)) logits_.resize(static_cast<size_t>(n_logits * V));
  const Status st =
      block_.Forward(batch_.seqs, hidden_in_.data(), pages_, pool, scratch_, logits_.data(), hidden_out_.data());
  if (!st.ok()) {  // a bug, not a client error: no drafts this step, and the block's cache is redone
    PG_LOG_ERROR("MTP forward failed: {}", st.ToString());
    for (DraftRequest& r : requests) {
      r.out->clear();
      if (auto it = seqs_.find(r.id); it != seqs_.end()) Truncate(r.id, it->second, 0);
    }
    batch_.clear();
    return false;
  }
  next_.clear();
  next_hidden_.clear();
  int64_t li = 0, t_end = 0;
  for (size_t e = 0; e < batch_.seqs.size(); ++e) {
    t_end += batch_.seqs[e].n_tokens;
    const size_t req = batch_.rows[e];
    if (req == kNoRow) continue;
    DraftRequest& r = requests[req];
    Seq& s = seqs_[r.id];
    const float* row = &logits_[static_cast<size_t>(li++ * V)];
    const auto tok = static_cast<int32_t>(std::max_element(row, row + V) - row);  // ties to the lowest id
    r.out->push_back(tok);
    if (static_cast<int>(r.out->size()) >= r.want) continue;
    const auto pos = static_cast<int64_t>(s.inputs.size());
    s.inputs.push_back(tok);  // a chain entry: dropped at the next proposal
    next_.Add(&r.out->back(), 1, pos, s.table, req);
    const float* h = &hidden_out_[static_cast<size_t>((t_end - 1) * D)];
    next_hidden_.insert(next_hidden_.end(), h, h + D);
  }
  batch_.swap(next_);
  hidden_in_.swap(next_hidden_);
  return true;
}

}  // namespace pg
