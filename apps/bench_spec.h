// bench-model's speculative tg: one sequence decoding greedily through the
// engine's SpeculativeDecoder (engine/speculative/speculative_decoder.h) and
// CpuExecutor: each step runs Propose, Plan, Verify (one entry of 1 + k
// positions with logits at each, as serve runs it) and Accept. With
// --spec-synthetic-acceptance-length the accepted count is drawn instead of
// compared (benchmark only; spec/synthetic_acceptance.h). With --spec draft
// the decoder's draft model proposes: its k draft steps (the first one
// catching up on the tokens it has not seen) run inside the timed loop, so
// tg+spec counts their cost.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/speculative/speculative_decoder.h"
#include "model/model.h"
#include "spec/spec_config.h"

namespace pg {

struct SpecDecodeResult {
  double tokens_per_s = -1;  // generated tokens / decode time (the 1-token prompt excluded)
  int64_t steps = 0, drafted = 0, accepted = 0;
};

// The decoder bench-model runs for n_gen tokens per repetition: limits that
// fit RunSpecDecode's arena and, with --spec-draft-model, the draft model
// with a private KV pool for one sequence.
Result<std::unique_ptr<SpeculativeDecoder>> CreateBenchDecoder(const Model& m, const std::string& model_path,
                                                               const ModelOptions& options, const SpecConfig& spec,
                                                               int n_gen);

// Decodes n_gen tokens after a one-token prompt (first_token), from a fresh
// private f16 arena; the decoder starts over (SpeculativeDecoder::Reset).
SpecDecodeResult RunSpecDecode(const Model& m, ThreadPool& pool, SpeculativeDecoder& decoder, int n_gen,
                               int32_t first_token, uint64_t seed);

}  // namespace pg
