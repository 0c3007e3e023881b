// CpuExecutor: the Executor (executor.h) of the CPU backend: Model::Forward
// on a thread pool, with its own ForwardScratch and logits buffer. The model
// and the pool outlive it; the pool is shared (the draft model runs on it
// between steps, never during one).
#pragma once

#include <vector>

#include "base/thread_pool.h"
#include "engine/executor.h"
#include "model/model.h"

namespace pg {

class CpuExecutor final : public Executor {
 public:
  CpuExecutor(const Model& model, ThreadPool& pool) : model_(model), pool_(pool) {}
  std::string arithmetic() const override { return "cpu"; }
  Status Prepare(const KvPages& pages) override;
  Result<LogitsRows> Forward(std::span<const BatchSeq> batch) override;

 private:
  const Model& model_;
  ThreadPool& pool_;
  KvPages pages_;
  ForwardScratch scratch_;
  std::vector<float> logits_;  // (rows, n_vocab), grown to the largest step
};

}  // namespace pg
