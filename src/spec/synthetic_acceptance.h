// SyntheticAcceptance: benchmark-only acceptance that ignores the target.
//
// --spec-synthetic-acceptance-length L with --spec-draft-max K: each of the K
// draft positions is accepted with the same conditional probability p (given
// that every earlier one was), where p + p^2 + ... + p^K = L - 1, so a step
// yields L tokens on average (the accepted drafts plus the target's token).
// This is the definition of vLLM's SpeculativeConfig
// synthetic_acceptance_length and llama.cpp's --spec-synthetic-acceptance-length
// (constant conditional acceptance). L must lie in [1, K + 1]: L = 1 accepts
// nothing (p = 0), L = K + 1 accepts everything (p = 1).
//
// Accepted positions keep the DRAFT's tokens whatever the target computed
// (as vLLM's synthetic rejection sampler does): the output is not the model's
// own, so the server marks it (docs/speculative.md).
//
// Thread-safety: the solver is a pure function; an object is per-caller
// state (its RNG).
#pragma once

#include <cstdint>
#include <random>

#include "base/status.h"

namespace pg {

// p in [0, 1] with p + ... + p^K = L - 1 (bisection to 1e-12). InvalidArgument
// naming both numbers when L is outside [1, K + 1] or K < 1.
Result<double> SolveConditionalAcceptance(double length, int k);

class SyntheticAcceptance {
 public:
  SyntheticAcceptance(double p, uint64_t seed) : p_(p), rng_(seed) {}
  // Accepted count among `drafted` positions: accept while Bernoulli(p) succeeds.
  int Accepted(int drafted);
  double p() const { return p_; }

 private:
  double p_;
  std::mt19937_64 rng_;
};

}  // namespace pg
