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
// Thread-safety: engine thread only (NewSequence: any thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
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
  std::unique_ptr<SyntheticAcceptance> synthetic;  // set under synthetic acceptance
  int drafter = -1;  // index (in SpecConfig::drafters) of the drafter of the pending draft; -1 = none
};

// Counters of one drafter (monotonic).
struct DrafterStats {
  int64_t steps = 0;     // verification steps with a draft of this drafter
  int64_t drafted = 0;   // draft tokens verified
  int64_t accepted = 0;  // draft tokens accepted
};

class Speculator {
 public:
  // Validates the config; Unimplemented for the draft-model drafter.
  static Result<std::unique_ptr<Speculator>> Create(SpecConfig config);

  const SpecConfig& config() const { return config_; }
  double synthetic_p() const { return synthetic_p_; }
  // Reads only the immutable config: may run on any thread (Engine::Submit).
  std::unique_ptr<SpecSequence> NewSequence(uint64_t seed) const;

  // Fills *draft (cleared first) with the tokens to verify after `context`
  // (prompt + generated so far); sets s.drafter. limit <= 0: no draft.
  void Propose(SpecSequence& s, std::span<const int32_t> context, int limit, std::vector<int32_t>* draft);
  // Synthetic acceptance: the accepted count among `drafted` (target ignored).
  int SyntheticAccepted(SpecSequence& s, int drafted);
  // After verification: counts the step for s.drafter and adapts the length.
  void Record(SpecSequence& s, int drafted, int accepted);
  // A finished sequence's tokens (prompt + output) join the suffix cache.
  void Finished(std::span<const int32_t> tokens);

  const std::vector<DrafterStats>& stats() const { return stats_; }  // in config().drafters order
  const SuffixCache& suffix_cache() const { return suffix_; }

 private:
  explicit Speculator(SpecConfig config) : config_(std::move(config)), stats_(config_.drafters.size()) {}

  SpecConfig config_;
  double synthetic_p_ = 0;
  bool uses_suffix_ = false;
  SuffixCache suffix_;
  std::vector<DrafterStats> stats_;
};

}  // namespace pg
