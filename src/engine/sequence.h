// Sequence: the engine's state for one request, from queue to finish.
//
//   kWaiting  --admit-->  kLoading (host/disk blocks being promoted)
//                          |  promotions done
//                          v
//                        kRunning (prefill chunks, then one token per step)
//                          |  EOS / max_tokens / context full / cancel
//                          v
//                        kFinished
// A preempted sequence goes back to kWaiting with its generated tokens kept:
// on re-admission it recomputes (or re-finds in the prefix cache) its KV.
//
// Thread-safety: owned and touched only by the engine thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "constrain/constraint.h"
#include "engine/inference_service.h"
#include "engine/sampler.h"
#include "kv/kv_layout.h"
#include "spec/speculator.h"

namespace pg {

enum class SeqState { kWaiting, kLoading, kRunning, kFinished };

struct Sequence {
  SeqId id = 0;
  GenerationRequest request;
  EventCallback on_event;
  std::unique_ptr<Sampler> sampler;               // this request's RNG and penalty counts (built with the prompt)
  std::unique_ptr<ConstraintMatcher> constraint;  // where the output stands in request.constraint (null = none)

  SeqState state = SeqState::kWaiting;
  std::vector<int32_t> tokens;  // prompt followed by generated tokens
  int64_t n_prompt = 0;
  int64_t n_generated = 0;
  int64_t n_computed = 0;            // tokens whose K/V are in the blocks
  int64_t n_committed_blocks = 0;    // full blocks published to the prefix index
  std::vector<BlockId> block_table;  // device blocks, position / page_tokens -> block
  int64_t allocated_tokens = 0;      // tokens the block table was sized for

  // Scheduling bookkeeping.
  double arrival_s = 0;
  double first_scheduled_s = -1;
  double first_token_s = -1;
  int64_t preemptions = 0;
  bool cache_reported = false;  // reuse of the first admission recorded
  CacheUsage cache;

  // This step.
  int64_t step_tokens = 0;  // tokens scheduled this step

  // Speculative decoding (speculative/speculative_decoder.h). A decoding sequence with a draft
  // of k tokens is scheduled 1 + k positions: tokens.back() and the draft,
  // each scored (logits at every position) in the same forward pass.
  std::unique_ptr<SpecSequence> spec;  // drafting state; null when speculation is off
  std::vector<int32_t> draft;          // (k) tokens proposed for this step; empty = plain decode
  std::vector<int32_t> verify_tokens;  // (1 + k) this step's inputs: tokens.back(), then the draft
  SpecUsage spec_usage;

  int64_t remaining_to_compute() const { return static_cast<int64_t>(tokens.size()) - n_computed; }
  // Past its prompt: each step computes its last sampled token (and a draft).
  bool decoding() const { return remaining_to_compute() == 1 && n_generated > 0; }
  // This step's tokens reach the end of the sequence: its last row gets logits.
  bool step_reaches_end() const { return n_computed + step_tokens == static_cast<int64_t>(tokens.size()); }
};

}  // namespace pg
