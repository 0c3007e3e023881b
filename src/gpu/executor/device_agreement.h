// The device executor against the CPU on one model: the same two steps run
// through CpuExecutor (Model::Forward, the model's own options) with its KV
// pages in host memory and through DeviceExecutor with its pages in a
// DeviceBlockArena, then each step's logits compared. Used by `prosgrow
// doctor` (a tiny synthetic model on every device) and by the executor's
// tests (device_executor_test.cc), which assert the tolerances.
//
// The steps: two sequences in one step (a 9-token prefill with every row's
// logits, a 5-token prefill with the last row's), then one decode step of
// both; block tables out of order, 4-token pages.
//
// Thread-safety: none; makes its own executors, pool and arena.
#pragma once

#include <string>
#include <vector>

#include "base/kv_layout.h"
#include "base/status.h"
#include "gpu/executor/device_options.h"
#include "model/model.h"

namespace pg::gpu {

struct StepAgreement {
  double nmse = 0;           // sum (device - cpu)^2 / sum cpu^2 over the step's logits
  int64_t rows = 0;          // logit rows
  int64_t greedy_equal = 0;  // rows whose argmax is the same on both
  int64_t first_differing_row = -1;
};

struct Agreement {
  std::string arithmetic;  // the device executor's
  std::vector<StepAgreement> steps;
  double worst_nmse() const;
  bool greedy_equal() const;  // on every row of every step
};

// Fails (one line) when either executor cannot be made or a step fails.
// prompt > 9: the first sequence's prompt has that many tokens (past a
// sparse-attention model's top-k, so its indexer chooses keys), and only its
// last row's logits are compared in the first step.
Result<Agreement> CompareWithCpu(const Model& model, const DeviceOptions& options, KvDtype dtype, int64_t prompt = 9);

}  // namespace pg::gpu
