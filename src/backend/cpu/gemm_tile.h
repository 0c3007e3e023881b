// Private: a generic GEMM tile built from a row-times-activation dot product,
// for kernels that have no register-tiled version. The weight row stays in
// L1 while it meets every token of the tile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/matmul.h"

namespace pg {

template <typename WBlock, typename XBlock, float (*Dot)(const WBlock*, const XBlock*, int64_t)>
void GemmByDot(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1,
               int64_t r0, int64_t r1, float* y, int64_t ldy, int64_t block_elems) {
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

}  // namespace pg
