// MatMulPrecise: y = x * W^T like MatMul (matmul.h), with the activations
// left in f32 instead of quantized to the weight type's dot partner.
//
// MatMul follows llama.cpp: x is rounded to Q8_0 / Q8_K (8-bit integers with
// one scale per 32 / 256 values) or to f16 before the dot products. That
// rounding, one part in ~250 of each block's largest value, is by far the
// largest difference between a quantized model's logits and exact arithmetic
// on the same weights (docs/quality.md, "Fidelity to exact arithmetic").
// Here every weight block is dequantized (DequantizeChunk, dequant_chunk.h:
// DequantizeRow's values, ggml's dequantization, with AVX2 versions for
// Q8_0 / Q4_K / Q6_K) and dotted with f32 x by the active table's DotF32;
// the weights themselves are as stored.
//
// Arithmetic, per output y[t, r]: the row is cut into chunks of kChunk
// columns; each chunk's dot is DotF32 of the dequantized chunk with x's, and
// the chunks' dots are summed in order in f32. A result therefore depends only
// on its row of W and its row of x: not on n_tokens, the tiling or the thread
// count (the batch invariance the prefix cache relies on).
//
// Cost: more work per weight than the integer kernels (a dequantization per
// row per token tile, then f32 FMAs on 8 lanes instead of int8 products on
// 32), so it is an opt-in mode (`--attn precise`); docs/quality.md has the
// measured speed.
//
// Only row-major matrices (WeightLayout::kRowMajor), any type DequantizeRow
// reads. Thread-safety: as MatMul; no scratch (the chunk buffers are on the
// stack). Must not be called from inside a ParallelFor task of the same pool.
#pragma once

#include <cstdint>

#include "backend/cpu/matmul.h"
#include "base/thread_pool.h"

namespace pg {

// Columns dequantized at a time: one K-quant super-block, eight 32-blocks.
constexpr int64_t kPreciseChunk = 256;

// y[t * ldy + r] = sum_c W[r, c] * x[t * ldx + c] for t in [0, n_tokens).
void MatMulPrecise(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                   ThreadPool& pool);

// As MatMulMany: several matrices with the same cols applied to the same x,
// all in one parallel region (at most 8).
void MatMulPreciseMany(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tokens, ThreadPool& pool);

// One tile on the calling thread: rows [r0, r1), tokens [t0, t1). The unit
// MatMulPrecise parallelizes; exposed for tests.
void MatMulPreciseTile(const WeightMatrix& w, const float* x, int64_t ldx, int64_t t0, int64_t t1, int64_t r0,
                       int64_t r1, float* y, int64_t ldy);

}  // namespace pg
