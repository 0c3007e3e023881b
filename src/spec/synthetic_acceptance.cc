#include "spec/synthetic_acceptance.h"

#include <fmt/format.h>

namespace pg {

namespace {
double Geometric(double p, int k) {  // p + p^2 + ... + p^k
  double s = 0, t = 1;
  for (int i = 0; i < k; ++i) {
    t *= p;
    s += t;
  }
  return s;
}
}  // namespace

Result<double> SolveConditionalAcceptance(double length, int k) {
  if (k < 1) return InvalidArgument(fmt::format("--spec-draft-max must be >= 1 (got {})", k));
  if (!(length >= 1.0) || length > k + 1.0)
    return InvalidArgument(fmt::format(
        "--spec-synthetic-acceptance-length {} is outside [1, {}]: a step yields at most --spec-draft-max ({}) "
        "drafts plus one target token",
        length, k + 1, k));
  const double target = length - 1.0;
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (Geometric(mid, k) < target ? lo : hi) = mid;
  }
  return target <= 0 ? 0.0 : (target >= k ? 1.0 : 0.5 * (lo + hi));
}

int SyntheticAcceptance::Accepted(int drafted) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int a = 0;
  while (a < drafted && u(rng_) < p_) ++a;
  return a;
}

}  // namespace pg
