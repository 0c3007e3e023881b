// Private: a generic GEMM tile built from a row-times-activation dot product,
// for kernels that have no register-tiled version. The weight row stays in
// L1 while it meets every token of the tile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/fp16.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"

namespace pg {

template <typename WBlock, typename XBlock, float (*Dot)(const WBlock*, const XBlock*, int64_t)>
void GemmByDot(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy, int64_t block_elems) {
  const int64_t nb = w.cols / block_elems;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t r = r0; r < r1; ++r) {
    const auto* wr = reinterpret_cast<const WBlock*>(wbase + r * w.row_bytes);
    for (int64_t t = t0; t < t1; ++t) {
      const auto* xr = reinterpret_cast<const XBlock*>(xbase + t * xs);
      y[t * ldy + r] = Dot(wr, xr, nb);
    }
  }
}

// The scalar reference dot of a format with signed levels and one scale per
// 32-element block (Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4) against Q8_0
// activations: sum_b Scale(w_b) d_x sum_i Level(w_b, i) x_i, blocks in order.
template <typename Block, int (*Level)(const Block&, int), float (*Scale)(const Block&)>
float DotSigned(const Block* w, const BlockQ8_0* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int s = 0;
    for (int i = 0; i < kQK; ++i) s += Level(w[b], i) * x[b].qs[i];
    sum += Scale(w[b]) * F16ToF32(x[b].d) * static_cast<float>(s);
  }
  return sum;
}

// The f16 scale `d` of a block.
template <typename Block>
float F16Scale(const Block& b) {
  return F16ToF32(b.d);
}

}  // namespace pg
