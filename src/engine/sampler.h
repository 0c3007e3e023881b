// Sampler: turns one row of logits into the next token, for one sequence.
//
// Order of operations on the row (x[j] = the model's logit of token j):
//   0. constraint          with a ConstraintMatcher (structured outputs,
//                          enforced tool calls; src/constrain): x[j] = -inf
//                          for every token the grammar does not allow next,
//                          so greedy and sampled picks both stay inside it.
//                          The picked token is then fed to the matcher.
//                          min_tokens: x[j] = -inf for the end tokens until
//                          min_tokens were generated (HoldBackUntilMinTokens).
//   1. logit_bias          x[j] += bias[j]
//   2. repetition_penalty  for each j in the prompt or generated so far:
//                          x[j] > 0 ? x[j] / penalty : x[j] * penalty
//   3. frequency_penalty,  for each j generated so far (count[j] times):
//      presence_penalty    x[j] -= frequency * count[j] + presence * (count[j] > 0)
//   4. temperature         x[j] / temperature; below 1e-5 (0 included) the
//                          pick is the argmax of x, ties to the lowest id,
//                          and steps 5-7 are skipped
//   5. top_k               keep the k largest (ties to the lowest id)
//   6. top_p               softmax over the kept; keep the most likely until
//                          their probability sums to >= top_p
//   7. min_p               keep those with probability >= min_p * the largest
//   8. draw                one draw from the kept, renormalised, with the
//                          sequence's own RNG
// Steps 1-3 follow vLLM (logit bias as a logits processor before its
// penalties; repetition over prompt + output, frequency/presence over output
// only, OpenAI's formula) and llama.cpp (bias, then its penalties sampler
// with the same repetition rule). Steps 4-7 follow vLLM's V0 sampler
// (temperature before the filters, then top-k, top-p, min-p); llama.cpp's
// default chain applies temperature last instead, so its top_p/min_p see the
// untempered distribution.
//
// Log-probabilities reported to the user (event->logprob, event->top) come
// from the full softmax of the RAW logits, before steps 1-8: the model's own
// distribution, as vLLM reports by default (logprobs_mode raw_logprobs) and
// llama.cpp's server without post_sampling_probs. So a token forced by a
// +100 logit_bias, or by a constraint's mask, still shows the model's
// (possibly low) logprob, and top_logprobs may list tokens the constraint
// did not allow.
//
// Penalty state is a TokenCounts filled from the prompt at construction and
// updated with each token Sample() returns: the caller must append exactly
// the returned tokens to the sequence (the engine does).
//
// Thread-safety: a Sampler is per-sequence state (RNG, token counts);
// Sample() is not reentrant on one object. Scratch buffers are sized on the
// first call and the token counts are reserved at construction (the prompt's
// distinct ids plus up to 8192 generated), so steady-state sampling allocates
// nothing beyond event->top (a constraint's matcher does allocate as it
// advances, and on a mask-cache miss).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "constrain/constraint.h"
#include "engine/inference_service.h"
#include "engine/token_counts.h"

namespace pg {

class Sampler {
 public:
  // Temperatures below this are greedy (vLLM's threshold): dividing by them
  // would overflow float logits.
  static constexpr float kGreedyBelow = 1e-5f;

  // `prompt`: the request's prompt tokens (read by repetition_penalty; not
  // kept). Unseeded samplers draw their seed from std::random_device.
  explicit Sampler(const SamplingParams& params, std::span<const int32_t> prompt = {});

  // min_tokens: until params.min_tokens tokens have been generated (Sample or
  // Accept), `end_tokens` (the end-of-generation ids and stop_token_ids) get
  // -inf in step 0, so no pick ends the sequence early. Under a constraint
  // that allows nothing else the mask is lifted: the grammar decides.
  void HoldBackUntilMinTokens(std::vector<int32_t> end_tokens);

  // Picks the next token from logits[n_vocab]. When params.logprobs or
  // params.top_logprobs > 0, fills event->logprob / event->top (top_logprobs
  // alternatives, most likely first). The returned token counts as generated
  // from now on. With `constraint`, only tokens it allows are picked (step 0)
  // and the pick is accepted into it.
  int32_t Sample(const float* logits, int64_t n_vocab, TokenEvent* event, ConstraintMatcher* constraint = nullptr);

  // The distribution step 8 would draw from for these logits: (id,
  // probability) of every kept candidate, renormalised to sum to 1, in
  // candidate order ({argmax, 1} when greedy). Draws nothing and counts
  // nothing. For tests and inspection; allocates.
  void Distribution(const float* logits, int64_t n_vocab, std::vector<std::pair<int32_t, float>>* out,
                    ConstraintMatcher* constraint = nullptr);

  // Takes `token`, chosen elsewhere from this Sampler's Distribution()
  // (speculative rejection sampling with a draft model's q, SpeculativeDecoder::Accept),
  // as Sample() takes its own pick: it counts as generated from now on and
  // event->logprob / event->top are filled the same way. Draws nothing.
  void Accept(const float* logits, int64_t n_vocab, int32_t token, TokenEvent* event);

  // log softmax of the raw logits into out[n] (double accumulation).
  static void LogSoftmax(const float* logits, int64_t n, std::vector<float>* out);

 private:
  // Steps 0-3 into adjusted_ (or `logits` itself when none applies).
  // `allowed`: the constraint's mask, or null.
  const float* Adjust(const float* logits, int64_t n, const TokenBitmask* allowed);
  // Steps 4-8.
  int32_t Pick(const float* x, int64_t n);
  static int32_t Argmax(const float* x, int64_t n);
  // Steps 4-7 (not greedy): cand_[0, keep) = the kept (probability, id),
  // not yet renormalised; returns keep.
  size_t Candidates(const float* x, int64_t n);
  // Softmax over cand_[0, keep), then steps 6-7; returns the new keep.
  size_t Filter(size_t keep, bool sorted);
  // Step 6 on probabilities cand_[0, keep): sorts (a prefix of) them, most
  // likely first, and returns the nucleus size.
  size_t TopP(size_t keep, bool sorted);
  void Report(const float* logits, int64_t n, int32_t chosen, TokenEvent* event);

  // Step 0 for min_tokens: -inf on held_back_ while generated_ < min_tokens.
  void HoldBack(float* x, int64_t n, const TokenBitmask* allowed);
  bool holding_back() const { return !held_back_.empty() && generated_ < params_.min_tokens; }

  SamplingParams params_;
  bool penalised_ = false;          // any of the three penalties is on
  std::vector<int32_t> held_back_;  // end tokens masked until min_tokens
  int64_t generated_ = 0;           // tokens Sample() or Accept() returned
  std::mt19937_64 rng_;
  TokenCounts counts_;
  std::vector<float> adjusted_;                  // (n_vocab) logits after steps 0-3
  std::vector<std::pair<float, int32_t>> cand_;  // (logit, then probability; id) candidates
  std::vector<float> logprobs_;                  // (n_vocab) raw log-softmax
};

}  // namespace pg
