// bench-model's speculative tg: one sequence decoding greedily with drafts
// verified by the forward pass (each step scores 1 + k positions, one
// one-token batch entry per position, as the engine does; engine_spec.cc).
// With --spec-synthetic-acceptance-length the accepted count is drawn
// instead of compared (benchmark only; spec/synthetic_acceptance.h).
// With --spec draft the draft model (engine/draft_model.h) proposes: its k
// draft steps (the first one catching up on the tokens it has not seen) run
// inside the timed loop, so tg+spec counts their cost.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"
#include "engine/speculative/draft_model.h"
#include "model/model.h"
#include "spec/spec_config.h"

namespace pg {

struct SpecDecodeResult {
  double tokens_per_s = -1;  // generated tokens / decode time (the 1-token prompt excluded)
  int64_t steps = 0, drafted = 0, accepted = 0;
};

// Decodes n_gen tokens after a one-token prompt (first_token), from a fresh
// private f16 arena. `draft`: the loaded draft model for --spec draft (its
// KV pool must hold n_gen + K + 2 tokens); null = none.
SpecDecodeResult RunSpecDecode(const Model& m, ThreadPool& pool, const SpecConfig& spec, int n_gen,
                               int32_t first_token, uint64_t seed, DraftModel* draft = nullptr);

}  // namespace pg
