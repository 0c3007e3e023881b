// MtpDrafter: the multi-token-prediction drafter (--spec mtp;
// docs/speculative.md "MTP"). It drafts with the target model's own NextN
// block (model/nextn_block.h: the same weights, no second model) and keeps
// the block's latent rows in a one-layer KV pool of its own (device tier,
// prefix cache off, carved out of the device budget like the draft model's).
//
// Block position j pairs the trunk's final hidden state h_j with token
// t[j+1] and predicts t[j+2]. The engine hands over the trunk's hidden rows
// after every forward step (Observe: the executor's LogitsRows::hidden); they
// wait per sequence until the next proposal. A decoding sequence of n tokens
// has trunk K/V for [0, n-1), so h_0 .. h_{n-2} are known:
//
//   catch-up: positions m .. n-2 (inputs t[m+1..n), rows h_m..h_{n-2}) -> d0
//   step j:   position n-2+j, input d[j-1], the block's own output x at
//             position n-3+j standing in for the trunk's hidden   -> d[j]
//
// The chain's entries are dropped at the next proposal (rolled back to the
// positions made from the trunk's rows). A prompt's rows do not wait for the
// first decode step: the decoder catches prefilling sequences up once 256
// rows wait (SpeculativeDecoder::ProposeWithModel). Positions whose hidden state the
// trunk never computed in this engine (a prefix-cache hit) enter the block's
// cache with a zero hidden state: the drafts get worse, never the output.
// Drafts are the argmax of the block's logits (a deterministic drafter: the
// verifier's point-mass test, exact for greedy and sampled requests alike).
//
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/speculative/draft_batch.h"
#include "engine/speculative/draft_model.h"
#include "kv/kv_cache_manager.h"
#include "model/nextn_block.h"

namespace pg {

class MtpDrafter {
 public:
  // InvalidArgument, one line, when the target has no NextN block.
  static Result<std::unique_ptr<MtpDrafter>> Create(const Model& target);
  KvLayout Layout(int page_tokens, KvDtype dtype) const;
  Status CreateKv(uint64_t device_bytes, int page_tokens, KvDtype dtype);
  const KvCacheManager& kv() const { return *kv_; }
  const NextnBlock& block() const { return block_; }

  // The trunk computed positions [start, start + n) of seq; rows: their final
  // hidden states (n, n_embd). Earlier positions recomputed (a preempted
  // sequence) roll the block's cache back to them.
  void Observe(SeqId seq, int64_t start, int64_t n, const float* rows);
  // Drafts for every request (DraftRequest::want tokens at most), batched.
  // catchup_budget: most block positions the catch-up computes in all. A
  // request with want 0 only catches up (a prefilling sequence: context =
  // its tokens through the first not yet computed).
  // Trunk rows waiting for seq's block (0 for a sequence never observed).
  int64_t PendingRows(SeqId seq) const;
  void Propose(std::span<DraftRequest> requests, ThreadPool& pool, int64_t catchup_budget);
  void Retain(std::span<const SeqId> live);
  void Free(SeqId seq);
  // Requests that drafted nothing because the pool was full (monotonic).
  int64_t no_room() const { return no_room_; }

 private:
  struct Seq {
    std::vector<BlockId> table;
    std::vector<int32_t> inputs;  // entry j's token t[j+1]; entries [0, size) are in the blocks
    int64_t true_len = 0;         // entries made from the trunk's rows (the rest: the last chain)
    int64_t hid_pos = 0;          // position of pending's first row (rows before it, from true_len: zeros)
    std::vector<float> pending;   // trunk rows for positions hid_pos, hid_pos + 1, ...
    bool allocated = false;
  };
  MtpDrafter(const Model& target, NextnBlock block) : target_(target), block_(std::move(block)) {}
  int64_t Pending(const Seq& s) const;
  void Truncate(SeqId id, Seq& s, int64_t n);
  bool Reserve(SeqId id, Seq& s, int64_t tokens);
  // Rolls s back to its trunk-made entries that match `context`; drops rows past n - 1.
  void Prepare(SeqId id, Seq& s, std::span<const int32_t> context);
  void TakeRows(Seq& s, int64_t chunk);
  // One Forward of batch_ with hidden_in_; picks and chains (next_batch_).
  bool Step(std::span<DraftRequest> requests, ThreadPool& pool);

  const Model& target_;
  NextnBlock block_;
  std::unique_ptr<KvCacheManager> kv_;
  KvPages pages_;
  NextnScratch scratch_;
  std::unordered_map<SeqId, Seq> seqs_;
  int64_t no_room_ = 0;
  // Step buffers (reused).
  DraftBatch batch_, next_;        // this forward's entries; the chain's next ones
  std::vector<size_t> order_;      // request indices in catch-up order
  std::vector<float> hidden_in_;   // (batch_'s tokens, n_embd) the trunk's rows, then the chain's
  std::vector<float> hidden_out_;  // (batch_'s tokens, n_embd)
  std::vector<float> logits_;
  std::vector<float> next_hidden_;
};

}  // namespace pg
