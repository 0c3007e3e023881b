// Sampler: turns one row of logits into the next token.
//
// Chain: temperature -> top-k -> top-p -> min-p -> draw (temperature 0 is
// greedy argmax, ties to the lowest id). Log-probabilities reported to the
// user come from the full softmax of the raw logits, before any filter, as
// llama.cpp and the OpenAI API report them.
//
// Thread-safety: a Sampler is per-sequence state (its RNG); Sample() is not
// reentrant on one object. Scratch buffers are reused, so steady-state
// sampling allocates nothing.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "engine/inference_service.h"

namespace pg {

class Sampler {
 public:
  // Unseeded samplers draw their seed from std::random_device.
  explicit Sampler(const SamplingParams& params);

  // Picks the next token from logits[n_vocab]. When want_top > 0 or
  // want_logprob, fills event->logprob / event->top (want_top alternatives,
  // most likely first).
  int32_t Sample(const float* logits, int64_t n_vocab, TokenEvent* event);

  // log softmax of the raw logits into out[n] (double accumulation).
  static void LogSoftmax(const float* logits, int64_t n, std::vector<float>* out);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> cand_;  // (logit, id) candidates
  std::vector<float> logprobs_;
};

}  // namespace pg
