// VerifyPlanner: how many of its proposed draft tokens each sequence verifies
// this step, chosen so the step does the most useful work per second.
//
// A step runs N batch entries in T seconds. Counting every running sequence
// as one user, the step advances them at sum(progress) / T, where a prefill
// or a plain decode entry progresses by 1 (a chunk, a token) and a
// speculating sequence by its expected emitted tokens
//   E(k) = 1 + p + p^2 + ... + p^k
// (p: its estimated conditional acceptance per draft position). Its draft
// position j costs one more logits row, c_j seconds (a StepCostModel's
// marginal row cost at that position). The planner maximizes
//   U(k_1..k_n) = (N + sum_i sum_{j<=k_i} p_i^j) / (T0 + sum_i sum_{j<=k_i} c_ij)
// over 0 <= k_i <= drafted_i, T0 being the step without any draft rows. This
// is a ratio of sums, solved by Dinkelbach's iteration: at the current ratio
// lambda a row is worth adding iff p_i^j > lambda * c_ij; since p_i^j falls
// with j and c_ij grows, each sequence keeps a prefix of its draft; lambda is
// then recomputed until it stops rising (a few rounds).
//
// What it means in practice: next to a long prefill chunk (T0 large) draft
// rows are nearly free and every sequence verifies its whole draft; in a
// decode-only batch on a compute-bound device the rows cost about what they
// save and the planner drops them; a single sequence on a memory-bound device
// keeps them.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pg {

struct VerifyCandidate {
  double p = 0;             // conditional acceptance per draft position, in [0, 1]
  int drafted = 0;          // draft tokens proposed (k_i <= drafted)
  double row_s = 0;         // cost of draft position 1, seconds
  double row_growth_s = 0;  // extra cost of each later position (attention over one more key)
};

struct VerifyPlan {
  std::vector<int> keep;  // per candidate: draft tokens to verify
  double ratio = 0;       // U at the plan (progress per second)
};

// The prefix of c's draft worth verifying at ratio lambda (progress per
// second): positions j with p^j > lambda * (cost of position j), up to the
// first that is not. Adds their expected tokens and their cost to *gain and
// *cost when given.
int KeepAtRatio(const VerifyCandidate& c, double lambda, double* gain = nullptr, double* cost = nullptr);

// base_step_s: T0 (> 0); n_entries: N, the step's batch entries.
VerifyPlan PlanVerification(double base_step_s, int64_t n_entries, std::span<const VerifyCandidate> candidates);

}  // namespace pg
