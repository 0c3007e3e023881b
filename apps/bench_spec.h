// bench-model's speculative tg: one sequence decoding greedily with drafts
// verified by the forward pass (each step scores 1 + k positions, one
// one-token batch entry per position, as the engine does; engine_spec.cc).
// With --spec-synthetic-acceptance-length the accepted count is drawn
// instead of compared (benchmark only; spec/synthetic_acceptance.h).
#pragma once

#include <cstdint>

#include "base/thread_pool.h"
#include "model/model.h"
#include "spec/spec_config.h"

namespace pg {

struct SpecDecodeResult {
  double tokens_per_s = -1;  // generated tokens / decode time (the 1-token prompt excluded)
  int64_t steps = 0, drafted = 0, accepted = 0;
};

// Decodes n_gen tokens after a one-token prompt (first_token), from a fresh
// private f16 arena.
SpecDecodeResult RunSpecDecode(const Model& m, ThreadPool& pool, const SpecConfig& spec, int n_gen,
                               int32_t first_token, uint64_t seed);

}  // namespace pg
