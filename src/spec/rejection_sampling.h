// Speculative rejection sampling with a non-degenerate draft distribution
// (the draft model's q). At one position the target's distribution is p and
// the draft token d was drawn from q: accept d with probability
// min(1, p(d) / q(d)); on rejection emit a draw from norm(max(0, p - q)).
// The emitted token is then distributed exactly as p (Leviathan et al. 2023,
// Chen et al. 2023), whatever q is. A point-mass q (a deterministic drafter)
// is the special case the engine handles by drawing x ~ p and accepting iff
// x == d (SpeculativeDecoder::Accept, engine/speculative/speculative_decoder.cc).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>

namespace pg {

struct RejectionStep {
  int32_t token = -1;     // the emitted token
  bool accepted = false;  // token == the draft token, accepted by the test
};

// p, q: (n_vocab) probabilities, each summing to 1 (q(d) > 0). u_accept,
// u_residual: independent uniform draws in [0, 1). When the residual
// max(0, p - q) is zero everywhere (p == q up to rounding; a rejection is
// then a rounding accident) the token is drawn from p instead.
RejectionStep SpeculativeRejection(std::span<const float> p, std::span<const float> q, int32_t draft, double u_accept,
                                   double u_residual);

}  // namespace pg
