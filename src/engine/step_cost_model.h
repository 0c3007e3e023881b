// StepCostModel: predicts how long a forward step takes from its shape,
// fitted online to the steps the engine actually ran, so decisions that
// trade rows for time (SpeculativeDecoder::Plan: how many draft tokens to verify) use
// this machine's costs, not constants.
//
// Model: seconds = a + b * plain_rows + c * logit_rows
//                  + d * entry_keys + e * row_keys
// plain/logit rows: batch rows without / with an output projection;
// entry_keys: per batch entry, the keys its attention reads (K/V loaded once
// per entry, shared by its rows); row_keys: per row, the keys it attends to
// (the dot products). Fitted by exponentially weighted least squares
// (weight 0.995^age, about the last 200 steps), in relative error (each
// step weighted 1 / seconds^2, so the many short decode steps count as much
// as the long prefill ones they are compared with), damped so collinear steps
// (e.g. only single-row decodes) still give finite coefficients, and
// constrained to non-negative coefficients (active set).
//
// Thread-safety: one thread (the engine's).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "metrics/metric_set.h"
#include "model/model.h"

namespace pg {

struct StepShape {
  double plain_rows = 0, logit_rows = 0, entry_keys = 0, row_keys = 0;
  // Adds one batch entry of n_tokens rows starting at start_pos.
  void AddEntry(int64_t start_pos, int64_t n_tokens, int64_t logit_rows);
};

StepShape ShapeOf(std::span<const BatchSeq> batch);

class StepCostModel {
 public:
  static constexpr int kFeatures = 5;
  static constexpr int64_t kMinObservations = 32;

  void Observe(const StepShape& shape, double seconds);
  // Enough steps seen for the predictions to mean something.
  bool ready() const { return n_ >= kMinObservations; }
  // Ready, and recent predictions within kMaxUsableError of the measured
  // times (a machine whose step times swing with outside load is not
  // predicted well enough to trade rows for time).
  static constexpr double kMaxUsableError = 0.35;
  bool usable() const { return ready() && rel_error_ < kMaxUsableError; }
  double Predict(const StepShape& shape) const;
  // The cost of one more logits row in an existing entry, attending to
  // `keys` keys.
  double ExtraRowSeconds(int64_t keys) const;
  int64_t observations() const { return n_; }
  // Mean |predicted - measured| / measured over recent steps (weight 0.99^age),
  // each prediction made before its step was observed.
  double relative_error() const { return rel_error_; }
  // Coefficient per feature in seconds per unit: step, plain row, logits
  // row, key loaded, key attended.
  std::array<double, kFeatures> seconds_per_unit() const;
  const std::array<double, kFeatures>& coefficients() const { return theta_; }

 private:
  void Solve();

  std::array<double, kFeatures * kFeatures> xtx_{};
  std::array<double, kFeatures> xty_{};
  std::array<double, kFeatures> theta_{};
  int64_t n_ = 0;
  double rel_error_ = 0;
};

// The /metrics families: the fitted costs (prosgrow_step_cost_seconds{term=...})
// and the recent relative error.
void CollectStepCostMetrics(const StepCostModel& m, MetricSet* out);

}  // namespace pg
