#include "spec/verify_planner.h"

#include <algorithm>

namespace pg {

int KeepAtRatio(const VerifyCandidate& c, double lambda, double* gain, double* cost) {
  int k = 0;
  double pj = 1.0;
  for (int j = 1; j <= c.drafted; ++j) {
    pj *= c.p;
    const double cj = c.row_s + (j - 1) * c.row_growth_s;
    if (pj <= lambda * cj) break;
    if (gain) *gain += pj;
    if (cost) *cost += cj;
    k = j;
  }
  return k;
}

namespace {

// Keeps, for every candidate, the prefix of rows worth more than lambda per
// second; returns U for that choice.
double Choose(double base_step_s, int64_t n_entries, std::span<const VerifyCandidate> cands, double lambda,
              std::vector<int>* keep) {
  double gain = static_cast<double>(n_entries), cost = base_step_s;
  for (size_t i = 0; i < cands.size(); ++i) (*keep)[i] = KeepAtRatio(cands[i], lambda, &gain, &cost);
  return gain / cost;
}

}  // namespace

VerifyPlan PlanVerification(double base_step_s, int64_t n_entries, std::span<const VerifyCandidate> candidates) {
  VerifyPlan plan;
  plan.keep.assign(candidates.size(), 0);
  const double t0 = std::max(base_step_s, 1e-9);
  double lambda = static_cast<double>(n_entries) / t0;  // no draft rows at all
  plan.ratio = lambda;
  std::vector<int> keep(candidates.size(), 0);
  for (int round = 0; round < 16; ++round) {
    const double u = Choose(t0, n_entries, candidates, lambda, &keep);
    if (u <= lambda * (1 + 1e-12)) break;  // no row beats the current ratio: optimal
    lambda = u;
    plan.keep = keep;
    plan.ratio = u;
  }
  return plan;
}

}  // namespace pg
