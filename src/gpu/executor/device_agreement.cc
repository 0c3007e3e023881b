#include "gpu/executor/device_agreement.h"

#include <algorithm>
#include <span>

#include "base/normalised_error.h"
#include "base/thread_pool.h"
#include "engine/cpu_executor.h"
#include "gpu/executor/device_arena.h"
#include "gpu/executor/device_executor.h"

namespace pg::gpu {
namespace {

constexpr int64_t kPage = 4;

// Each step's logits rows, copied out of the executor's buffer. The first
// sequence's prompt has `prompt` tokens (9; or more, on pages 2 and up in
// descending order, the second sequence's on pages 1 and 0).
Result<std::vector<std::vector<float>>> RunSteps(Executor& ex, int64_t n_vocab, int64_t prompt) {
  std::vector<int32_t> a = {5, 17, 99, 3, 250, 41, 7, 8, 120}, b = {60, 61, 2, 300, 4};
  std::vector<int32_t> ta = {5, 2, 7}, tb = {1, 4};
  if (prompt > 9) {  // pages out of order: ta = {last, ..., 2}, tb = {1, 0}
    a.resize(static_cast<size_t>(prompt));
    for (int64_t i = 9; i < prompt; ++i) a[static_cast<size_t>(i)] = static_cast<int32_t>((i * 37 + 11) % 500);
    ta.clear();
    for (int64_t p = (prompt + kPage) / kPage + 1; p >= 2; --p) ta.push_back(static_cast<int32_t>(p));
    tb = {1, 0};
  }
  const auto n_a = static_cast<int64_t>(a.size()), nta = static_cast<int64_t>(ta.size());
  const int32_t na = 33, nb = 77;
  const bool all = prompt <= 9;  // a longer prompt: its last row's logits only (the emulator's output product is slow)
  BatchSeq s1[2] = {{a.data(), n_a, 0, ta.data(), nta, !all, all}, {b.data(), 5, 0, tb.data(), 2, true, false}};
  BatchSeq s2[2] = {{&na, 1, n_a, ta.data(), nta, true, false}, {&nb, 1, 5, tb.data(), 2, true, false}};
  std::vector<std::vector<float>> out;
  for (std::span<const BatchSeq> step : {std::span<const BatchSeq>(s1, 2), std::span<const BatchSeq>(s2, 2)}) {
    PG_ASSIGN_OR_RETURN(LogitsRows rows, ex.Forward(step));
    out.emplace_back(rows.data, rows.data + rows.rows * n_vocab);
  }
  return out;
}

StepAgreement Compare(const std::vector<float>& got, const std::vector<float>& want, int64_t n_vocab) {
  StepAgreement s;
  s.nmse = NormalisedError(got.data(), want.data(), want.size());
  s.rows = static_cast<int64_t>(want.size()) / n_vocab;
  for (int64_t r = 0; r < s.rows; ++r) {
    auto argmax = [&](const std::vector<float>& v) {
      return std::max_element(v.begin() + r * n_vocab, v.begin() + (r + 1) * n_vocab) - v.begin();
    };
    if (argmax(got) == argmax(want)) {
      ++s.greedy_equal;
    } else if (s.first_differing_row < 0) {
      s.first_differing_row = r;
    }
  }
  return s;
}

}  // namespace

double Agreement::worst_nmse() const {
  double w = 0;
  for (const StepAgreement& s : steps) w = std::max(w, s.nmse);
  return w;
}

bool Agreement::greedy_equal() const {
  return std::all_of(steps.begin(), steps.end(), [](const StepAgreement& s) { return s.greedy_equal == s.rows; });
}

Result<Agreement> CompareWithCpu(const Model& model, const DeviceOptions& options, KvDtype dtype, int64_t prompt) {
  const ModelConfig& mc = model.config();
  const KvLayout layout = mc.KvLayoutFor(kPage, dtype);  // an MLA model's has its latent rows and indexer keys
  const int64_t n_blocks = std::max<int64_t>(8, (prompt + kPage) / kPage + 2);
  std::vector<uint8_t> host(static_cast<size_t>(n_blocks) * layout.block_bytes());
  ThreadPool pool(2);
  CpuExecutor cpu(model, pool);
  PG_RETURN_IF_ERROR(cpu.Prepare(KvPages{host.data(), layout.block_bytes(), layout}));
  PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBlockArena> arena,
                      DeviceBlockArena::Create(n_blocks, layout.block_bytes(), options.device));
  PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceExecutor> dev, DeviceExecutor::Create(model, options));
  const auto stride = static_cast<size_t>(arena->BlockPtr(1) - arena->BlockPtr(0));
  PG_RETURN_IF_ERROR(dev->Prepare(KvPages{arena->BlockPtr(0), stride, layout}));
  PG_ASSIGN_OR_RETURN(auto want, RunSteps(cpu, mc.n_vocab, prompt));
  PG_ASSIGN_OR_RETURN(auto got, RunSteps(*dev, mc.n_vocab, prompt));
  Agreement a;
  a.arithmetic = dev->arithmetic();
  for (size_t i = 0; i < want.size(); ++i) a.steps.push_back(Compare(got[i], want[i], mc.n_vocab));
  return a;
}

}  // namespace pg::gpu
