// DraftModel: the draft-model drafter of speculative decoding (--spec draft
// --spec-draft-model FILE; docs/speculative.md "Draft model"). A second,
// smaller Model with the target's vocabulary proposes k tokens per decoding
// sequence by k draft decode steps, batched across sequences (one draft
// Forward per step for every sequence that drafts).
//
// KV. The draft's KvLayout differs from the target's, so its pages are a
// second KvCacheManager (device tier only, prefix cache off: the draft's
// blocks are private and never published) carved out of the same device
// budget (Engine::Create splits --kv-device-mem by the two models' bytes per
// token, so both pools hold the same number of tokens). Per sequence the
// draft keeps the input tokens whose K/V its blocks hold; before drafting it
// rolls back to the longest common prefix with the sequence's tokens
// (TruncateSequence, as the target does after verification) and catches up
// on the rest in the first draft step: the prompt's prefill (chunked by a
// per-step token budget) and, after verification, the accepted tokens the
// draft did not compute.
//
//   context t[0..n)           draft K/V valid for [0, m), m <= n - 1
//   step 0:  inputs t[m..n)   -> logits -> d0     (the catch-up rides along)
//   step j:  input  d[j-1] at position n + j - 1 -> d[j]   (j < k)
//
// Drafts: greedy requests take the argmax of the draft's raw logits. Sampled
// requests (temperature > 0) draw d[j] from q[j], the draft logits processed
// by a Sampler with the request's temperature, top-k, top-p, min-p and
// logit_bias (no penalties); q[j] is kept for the verifier's min(1, p/q) test
// (SpeculativeDecoder::Accept, speculative_decoder.cc).
//
// Thread-safety: engine thread only (one owner; Forward uses the pool given).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/inference_service.h"
#include "engine/sampler.h"
#include "engine/speculative/draft_batch.h"
#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace pg {

// One sequence's drafting request for this step.
struct DraftRequest {
  SeqId id = 0;
  std::span<const int32_t> context;          // prompt + output so far (n >= 1 tokens)
  int want = 0;                              // draft tokens wanted (k >= 1)
  const SamplingParams* sampling = nullptr;  // the request's; greedy when temperature < kGreedyBelow
  uint64_t seed = 0;                         // the sequence's draft RNG seed (first request only)
  std::vector<int32_t>* out = nullptr;       // filled with <= want tokens; empty = no draft this step
};

class DraftModel {
 public:
  // Loads the draft with the target's arithmetic (same backend);
  // InvalidArgument naming both files when its vocabulary (n_vocab, every
  // token's text and type, BOS/EOS ids, end-of-generation tokens) differs
  // from the target's.
  static Result<std::unique_ptr<DraftModel>> Load(const std::string& path, const ModelOptions& options,
                                                  const std::string& target_path, const Model& target,
                                                  const Tokenizer& target_tokenizer);
  // The draft's KV block layout for this page size and dtype.
  KvLayout Layout(int page_tokens, KvDtype dtype) const;
  // Creates the draft's KV pool: device tier only, prefix cache off.
  Status CreateKv(uint64_t device_bytes, int page_tokens, KvDtype dtype);

  const Model& model() const { return *model_; }
  const KvCacheManager& kv() const { return *kv_; }

  // Runs the draft for every request, batched. `catchup_budget`: most
  // context tokens the first step may compute in all (a sequence further
  // behind catches up part of the way and drafts nothing this step).
  void Propose(std::span<DraftRequest> requests, ThreadPool& pool, int64_t catchup_budget);
  // The distribution q the i-th token of seq's last draft was drawn from
  // ((n_vocab) probabilities); null for a greedy draft.
  const float* DraftDistribution(SeqId seq, int i) const;
  // Rolls seq's draft K/V back to the longest common prefix with `tokens`
  // (after verification: the accepted draft inputs stay, the rest go).
  void Rollback(SeqId seq, std::span<const int32_t> tokens);
  // Frees the KV of every sequence not in `live` (finished, cancelled, preempted).
  void Retain(std::span<const SeqId> live);
  // Frees seq's KV now (it finished); no-op for a sequence never drafted.
  void Free(SeqId seq);
  // Requests that drafted nothing because the draft's KV pool was full (monotonic).
  int64_t no_room() const { return no_room_; }

 private:
  struct Seq {
    std::vector<BlockId> table;      // draft device blocks
    std::vector<int32_t> kv_tokens;  // inputs whose K/V are in the blocks: positions [0, size)
    std::vector<float> q;            // (k, n_vocab) distributions of the last sampled draft
    int q_rows = 0;
    std::unique_ptr<Sampler> sampler;  // q's processing (sampled requests)
    std::mt19937_64 rng;
    bool allocated = false;
  };
  DraftModel() = default;
  // Grows seq's blocks to `tokens` positions; false when the pool is full.
  bool Reserve(SeqId id, Seq& s, int64_t tokens);
  int32_t Pick(Seq& s, const DraftRequest& r, const float* logits, int j);
  void Truncate(SeqId id, Seq& s, int64_t n);

  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCacheManager> kv_;
  KvPages pages_;
  ForwardScratch scratch_;
  std::unordered_map<SeqId, Seq> seqs_;
  int64_t no_room_ = 0;
  // Step buffers (reused).
  DraftBatch batch_, next_;    // this forward's entries; the next draft token's
  std::vector<size_t> order_;  // request indices in catch-up order
  std::vector<float> logits_;
  std::vector<std::pair<int32_t, float>> dist_;
};

// Checks that two tokenizers have the same vocabulary; "" when they do, else
// what differs (the first token that does).
std::string VocabularyDifference(const Tokenizer& a, const Tokenizer& b);

}  // namespace pg
