// The feed-forward blocks of the forward pass: a dense SwiGLU, and the
// Mixture-of-Experts FFN of one layer over a batch of tokens.
//
// MoeFfn, for T tokens h (T, n_embd):
//   1. router logits = h * ffn_gate_inp^T (T, n_expert); RouteToken per token
//      (expert_router.h) -> k experts and weights each;
//   2. the (token, slot) pairs are grouped by expert (a counting sort), and
//      each expert's tokens gathered into one contiguous block of rows:
//
//        grouped rows: | expert 0's tokens | expert 3's | expert 4's | ...
//                      ^offsets[0]         ^offsets[3]  ...   (experts with
//                                                              no token: empty)
//   3. one SwiGLU per expert that has >= 1 token, on views of that expert's
//      slice of the 3-D tensors (model_weights.h, ExpertStack; repacked at
//      load like the dense matrices): all active experts' gate and up
//      products as one grouped product (MatMulGroupedPrepared: (expert, token
//      block, row block) tasks in one parallel region; each token's
//      activations quantized once, then copied to its grouped rows),
//      SiLU * up, then all downs as one grouped product;
//   4. each token's k outputs are summed with their weights in the router's
//      slot order, then the shared expert (glm4moe) is added.
// A token's result is the same bits whatever else is in the batch: MatMul is
// batch-invariant per row and step 4 never depends on the grouping.
//
// Thread-safety: like MatMul; a MoeScratch belongs to one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cpu/matmul.h"
#include "base/thread_pool.h"
#include "model/model_config.h"
#include "model/model_weights.h"

namespace pg {

// y = down(silu(gate x) * up x) for T rows of x (T, gate.cols). g, u:
// (T, gate.rows) scratch; y: (T, down.rows), must not alias x. `precise`:
// the products are MatMulPrecise's (f32 activations, row-major weights).
void SwiGluFfn(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down, const float* x, int64_t T,
               float* g, float* u, float* y, ThreadPool& pool, MatMulScratch& mm, bool precise = false);

// How MoeFfn runs the experts' products. kGrouped (the default):
// MatMulGrouped, every active expert's gate and up in one parallel region,
// then every down in one. kPerExpert: one SwiGluFfn per expert (whole experts
// per thread); the path precise products take, and the reference the grouped
// path is tested against, bit for bit (moe_ffn_test).
enum class ExpertProducts { kGrouped, kPerExpert };

// Per-caller buffers of MoeFfn; grown by Reserve, never on the hot path.
class MoeScratch {
 public:
  void Reserve(const ModelConfig& c, int64_t n_tokens, int n_threads);
  // Experts that MoeFfn has run (summed over calls, i.e. layers and steps):
  // with an expert's bytes, the expert weights a step read (bench-model).
  uint64_t experts_run() const { return experts_run_; }

 private:
  // One thread's private pool (just that thread) and activation buffer, for
  // running whole experts in parallel.
  struct Lane {
    ThreadPool pool{1};
    MatMulScratch mm;
  };
  friend void MoeFfn(const ModelConfig&, const LayerWeights&, const float*, int64_t, float*, ThreadPool&, MoeScratch&,
                     MatMulScratch&, bool, ExpertProducts);
  friend void RunExpertsOneByOne(const LayerWeights&, int64_t, int64_t, ThreadPool&, MoeScratch&, MatMulScratch&, bool);
  friend const PreparedRows* GatherPrepared(const LayerWeights&, const float*, int64_t, int64_t, int64_t, ThreadPool&,
                                            MoeScratch&, MatMulScratch&, PreparedRows*);
  friend void RunExpertsGrouped(const LayerWeights&, const float*, int64_t, int64_t, int64_t, int64_t, ThreadPool&,
                                MoeScratch&, MatMulScratch&);
  int64_t cap_tokens_ = 0;
  uint64_t experts_run_ = 0;                  // (layer, expert) SwiGLUs run, for bytes-read accounting
  std::vector<std::unique_ptr<Lane>> lanes_;  // (n_threads)
  std::vector<int32_t> active_;               // experts with >= 1 token (one by one: most rows first)
  std::vector<WeightMatrix> views_;           // (3 * n_expert) gate, up, down of each active expert
  std::vector<MatMulGroup> groups_;           // (3 * n_expert) all gates, all ups, all downs
  std::vector<float> logits_;                 // (T, n_expert) router outputs
  std::vector<float> probs_;                  // (T, n_expert) gate probabilities
  std::vector<int32_t> experts_;              // (T, k) chosen experts per token, in slot order
  std::vector<float> weights_;                // (T, k) their weights
  std::vector<int64_t> offsets_;              // (n_expert + 1) first grouped row of each expert
  std::vector<int64_t> cursor_;               // (n_expert) next free grouped row while grouping
  std::vector<int32_t> row_token_;            // (T * k) token of each grouped row
  std::vector<int64_t> slot_row_;             // (T * k) grouped row of (token, slot)
  std::vector<float> xg_;    // (T * k, n_embd) gathered inputs (grouped path: prepared rows, same room)
  std::vector<float> gate_;  // (T * k, n_ff_exp); (T, n_shared * n_ff_exp) for the shared expert
  std::vector<float> up_;    // idem
  std::vector<float> yg_;    // (T * k, n_embd) expert outputs, grouped
};

// out (T, n_embd) = the MoE FFN of layer L (c.IsMoeLayer) applied to h (T, n_embd).
// out must not alias h. `precise`: the experts' products as SwiGluFfn's
// (the router's F32 product is exact either way).
void MoeFfn(const ModelConfig& c, const LayerWeights& L, const float* h, int64_t T, float* out, ThreadPool& pool,
            MoeScratch& s, MatMulScratch& mm, bool precise = false, ExpertProducts how = ExpertProducts::kGrouped);

}  // namespace pg
