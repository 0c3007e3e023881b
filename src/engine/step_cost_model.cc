#include "engine/step_cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pg {
namespace {

constexpr double kDecay = 0.995;
constexpr double kDamping = 1e-3;  // relative, on the diagonal
// Features scaled to similar magnitudes (rows ~1-512, keys ~1e2-1e6).
constexpr std::array<double, StepCostModel::kFeatures> kScale = {1.0, 1e-2, 1e-1, 1e-4, 1e-5};

std::array<double, StepCostModel::kFeatures> Features(const StepShape& s) {
  return {kScale[0], s.plain_rows * kScale[1], s.logit_rows * kScale[2], s.entry_keys * kScale[3],
          s.row_keys * kScale[4]};
}

}  // namespace

void StepShape::AddEntry(int64_t start_pos, int64_t n_tokens, int64_t logits) {
  const double n = static_cast<double>(n_tokens), p = static_cast<double>(start_pos);
  plain_rows += n - static_cast<double>(logits);
  logit_rows += static_cast<double>(logits);
  entry_keys += p + n;
  row_keys += n * p + n * (n + 1) / 2;  // row i attends to start_pos + i + 1 keys
}

StepShape ShapeOf(std::span<const BatchSeq> batch) {
  StepShape s;
  for (const BatchSeq& b : batch) s.AddEntry(b.start_pos, b.n_tokens, b.logit_rows());
  return s;
}

void StepCostModel::Observe(const StepShape& shape, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return;
  const auto x = Features(shape);
  if (ready()) rel_error_ = 0.99 * rel_error_ + 0.01 * std::fabs(Predict(shape) - seconds) / std::max(seconds, 1e-6);
  const double w = 1.0 / std::max(seconds * seconds, 1e-12);
  for (double& v : xtx_) v *= kDecay;
  for (double& v : xty_) v *= kDecay;
  for (int i = 0; i < kFeatures; ++i) {
    xty_[i] += w * x[i] * seconds;
    for (int j = 0; j < kFeatures; ++j) xtx_[i * kFeatures + j] += w * x[i] * x[j];
  }
  ++n_;
  if (ready()) Solve();
}

// Non-negative least squares on the damped normal equations by active set:
// solve over the free coefficients (Gaussian elimination with partial
// pivoting), pin the most negative one at 0, repeat.
void StepCostModel::Solve() {
  constexpr int F = kFeatures;
  std::array<bool, F> free;
  free.fill(true);
  for (int round = 0; round < F; ++round) {
    int idx[F], n = 0;
    for (int i = 0; i < F; ++i)
      if (free[i]) idx[n++] = i;
    double a[F][F + 1];
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) a[r][c] = xtx_[idx[r] * F + idx[c]];
      a[r][r] += kDamping * xtx_[idx[r] * F + idx[r]] + 1e-12;
      a[r][n] = xty_[idx[r]];
    }
    for (int c = 0; c < n; ++c) {
      int piv = c;
      for (int r = c + 1; r < n; ++r)
        if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
      std::swap(a[c], a[piv]);
      if (std::fabs(a[c][c]) < 1e-300) return;  // keep the last good fit
      for (int r = 0; r < n; ++r) {
        if (r == c) continue;
        const double f = a[r][c] / a[c][c];
        for (int k = c; k <= n; ++k) a[r][k] -= f * a[c][k];
      }
    }
    std::array<double, F> theta{};
    int worst = -1;
    for (int r = 0; r < n; ++r) {
      theta[idx[r]] = a[r][n] / a[r][r];
      if (theta[idx[r]] < 0 && (worst < 0 || theta[idx[r]] < theta[worst])) worst = idx[r];
    }
    if (worst < 0) {
      theta_ = theta;
      return;
    }
    free[worst] = false;
  }
}

double StepCostModel::Predict(const StepShape& shape) const {
  const auto x = Features(shape);
  double t = 0;
  for (int i = 0; i < kFeatures; ++i) t += theta_[i] * x[i];
  return t;
}

std::array<double, StepCostModel::kFeatures> StepCostModel::seconds_per_unit() const {
  std::array<double, kFeatures> s;
  for (int i = 0; i < kFeatures; ++i) s[i] = theta_[i] * kScale[i];
  return s;
}

double StepCostModel::ExtraRowSeconds(int64_t keys) const {
  return theta_[2] * kScale[2] + theta_[3] * kScale[3] + theta_[4] * kScale[4] * static_cast<double>(keys);
}

void CollectStepCostMetrics(const StepCostModel& m, MetricSet* out) {
  static constexpr const char* kTerms[StepCostModel::kFeatures] = {"step", "row", "logits_row", "key_loaded",
                                                                   "key_attended"};
  MetricFamily& cost = out->Gauge("prosgrow_step_cost_seconds",
                                  "Forward-step cost fitted online: seconds per step, per batch row, per logits row, "
                                  "per attention key loaded (per entry) and per key attended (per row).");
  const auto s = m.seconds_per_unit();
  for (int i = 0; i < StepCostModel::kFeatures; ++i) cost.Add({{"term", kTerms[i]}}, MetricValue::Significant(s[i], 6));
  out->Gauge("prosgrow_step_cost_relative_error", "Mean relative error of the step-cost predictions on recent steps.",
             MetricValue::Fixed(m.relative_error(), 4));
}

}  // namespace pg
