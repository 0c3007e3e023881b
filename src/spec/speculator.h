// Speculator: the engine's drafting side of speculative decoding. It owns the
// drafters' shared state (the SuffixCache) and the per-drafter counters, and
// hands each sequence a SpecSequence (its NgramIndex, adaptive DraftLength
// and, for synthetic acceptance, its RNG). The engine verifies; this class
// never sees logits.
//
// Each step, Propose() asks the configured drafters in order (--spec
// ngram,suffix: n-gram first, suffix when it finds nothing) for at most
// min(limit, DraftLength) tokens. Under synthetic acceptance the draft is
// always exactly `limit` tokens (padded with the last context token when the
// drafters propose fewer), so every step verifies K positions.
//
// The draft model (kDraft) and the MTP layer (kMtp) need logits, so they do not run here: Propose()
// stops at it (SpecSequence::model_want > 0), the SpeculativeDecoder runs the draft model
// for every such sequence in one batch (engine/speculative/draft_model.h), and
// ProposeWithModel() takes its tokens or, with none, goes on down the chain.
//
// Thread-safety: engine thread only (NewSequence: any thread).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "base/status.h"
#include "spec/acceptance_estimate.h"
#include "spec/draft_length.h"
#include "spec/ngram_index.h"
#include "spec/spec_config.h"
#include "spec/suffix_cache.h"
#include "spec/synthetic_acceptance.h"

namespace pg {

struct SpecSequence {
  explicit SpecSequence(int draft_max) : length(draft_max) {}
  NgramIndex ngram;
  DraftLength length;
  AcceptanceEstimate acceptance;                   // this sequence's, over every drafter
  std::unique_ptr<SyntheticAcceptance> synthetic;  // set under synthetic acceptance
  std::mt19937_64 rng;                             // the draft model's min(1, p/q) acceptance draws (sampled requests)
  int drafter = -1;  // index (in SpecConfig::drafters) of the drafter of the pending draft; -1 = none
  // Propose() stopped at the draft model (kDraft) with nothing drafted yet:
  // the engine runs the draft model for this many tokens (batched across
  // sequences), then calls ProposeWithModel. 0 = the draft is final.
  int model_want = 0;
};

// Counters of one drafter (monotonic).
struct DrafterStats {
  int64_t steps = 0;     // verification steps with a draft of this drafter
  int64_t drafted = 0;   // draft tokens verified
  int64_t accepted = 0;  // draft tokens accepted
};

class Speculator {
 public:
  // Validates the config.
  static Result<std::unique_ptr<Speculator>> Create(SpecConfig config);

  const SpecConfig& config() const { return config_; }
  double synthetic_p() const { return synthetic_p_; }
  // Reads only the immutable config: may run on any thread (Engine::Submit).
  std::unique_ptr<SpecSequence> NewSequence(uint64_t seed) const;

  // Fills *draft (cleared first) with the tokens to verify after `context`
  // (prompt + generated so far); sets s.drafter. limit <= 0: no draft.
  // May stop at kDraft (s.model_want > 0): then call ProposeWithModel.
  void Propose(SpecSequence& s, std::span<const int32_t> context, int limit, std::vector<int32_t>* draft);
  // Finishes a Propose() that stopped at kDraft: the draft model's tokens
  // (empty: it had none, e.g. no KV room) or the drafters after it.
  void ProposeWithModel(SpecSequence& s, std::span<const int32_t> context, std::span<const int32_t> model_draft,
                        std::vector<int32_t>* draft);
  // Index of kDraft (or kMtp: both run a model) in config().drafters; -1 = neither listed.
  int model_drafter() const { return model_drafter_; }
  // Synthetic acceptance: the accepted count among `drafted` (target ignored).
  int SyntheticAccepted(SpecSequence& s, int drafted);
  // After verification: counts the step for s.drafter and adapts the length.
  void Record(SpecSequence& s, int drafted, int accepted);
  // The conditional acceptance per draft position to expect from s's next
  // draft: the synthetic p under synthetic acceptance; otherwise s's own
  // count pulled toward its drafter's (VerifyPlanner's p); before a
  // proposal, toward the best drafter's.
  double ExpectedAcceptance(const SpecSequence& s) const;
  // A finished sequence's tokens (prompt + output) join the suffix cache.
  // `seen`: how many leading tokens the cache already holds (the request's
  // prefix-cache hit: an agent's next turn repeats its whole context); only
  // the suffixes reaching past them are inserted, so a turn costs its new
  // tokens, not its context.
  void Finished(std::span<const int32_t> tokens, int64_t seen = 0);

  const std::vector<DrafterStats>& stats() const { return stats_; }  // in config().drafters order
  const SuffixCache& suffix_cache() const { return suffix_; }

 private:
  explicit Speculator(SpecConfig config)
      : config_(std::move(config)), stats_(config_.drafters.size()), acceptance_(config_.drafters.size()) {}
  // Runs drafters [from, end) until one proposes or kDraft is reached.
  void RunChain(SpecSequence& s, std::span<const int32_t> context, int want, size_t from, std::vector<int32_t>* draft);
  // Synthetic acceptance pads the draft to `want` tokens.
  void Finalize(SpecSequence& s, std::span<const int32_t> context, int want, std::vector<int32_t>* draft) const;

  SpecConfig config_;
  double synthetic_p_ = 0;
  bool uses_suffix_ = false;
  int model_drafter_ = -1;
  SuffixCache suffix_;
  std::vector<DrafterStats> stats_;
  std::vector<AcceptanceEstimate> acceptance_;  // per drafter, config().drafters order
};

}  // namespace pg
