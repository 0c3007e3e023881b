#include "spec/rejection_sampling.h"

#include <algorithm>

namespace pg {
namespace {

// The index where the cumulative weight first exceeds u * total.
int32_t Draw(std::span<const float> p, std::span<const float> q, bool residual, double u) {
  auto weight = [&](size_t i) {
    return residual ? std::max(0.0, static_cast<double>(p[i]) - static_cast<double>(q[i])) : static_cast<double>(p[i]);
  };
  double total = 0;
  int32_t last = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    const double w = weight(i);
    total += w;
    if (w > 0) last = static_cast<int32_t>(i);
  }
  if (total <= 0) return -1;
  double r = u * total;
  for (size_t i = 0; i < p.size(); ++i) {
    r -= weight(i);
    if (r < 0 && weight(i) > 0) return static_cast<int32_t>(i);
  }
  return last;  // rounding at the end of the walk
}

}  // namespace

RejectionStep SpeculativeRejection(std::span<const float> p, std::span<const float> q, int32_t draft, double u_accept,
                                   double u_residual) {
  const double pd = p[static_cast<size_t>(draft)], qd = q[static_cast<size_t>(draft)];
  if (qd <= 0 || u_accept * qd < pd) return {draft, true};  // u < p(d) / q(d)
  int32_t t = Draw(p, q, /*residual=*/true, u_residual);
  if (t < 0) t = Draw(p, q, /*residual=*/false, u_residual);
  return {t, false};
}

}  // namespace pg
