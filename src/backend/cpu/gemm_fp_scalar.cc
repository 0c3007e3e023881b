// Scalar reference dot products and GEMM tiles for the 8-bit-float-scaled
// weight types:
//   NVFP4    : against Q8_0 activations, as ggml's generic kernel sums it:
//              per 16-element sub-block s (half of Q8_0 block 2b + s / 2),
//              sum += (d_x * Ue4m3Scale(d[s])) * sum_i(kFp4Values[q] * xq), in order.
//   FP8_E4M3 : against the f32 activations themselves: each weight is
//              dequantized to f32 (E4m3ToF32(q) * d, rounded once, the value
//              DequantizeRow gives) and sum += w * x runs over the row in order.
#include <cstring>
#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/gemm_tile.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/repack.h"

namespace pg::scalar {

float DotNVFP4(const BlockNVFP4* w, const BlockQ8_0* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    for (int s = 0; s < kQKNV / kQKNVSub; ++s) {
      const BlockQ8_0& xb = x[2 * b + s / 2];
      const int8_t* xq = xb.qs + (s % 2) * kQKNVSub;
      int sumi = 0;
      for (int j = 0; j < kQKNVSub / 2; ++j) {
        const uint8_t q = w[b].qs[8 * s + j];
        sumi += xq[j] * kFp4Values[q & 15] + xq[j + 8] * kFp4Values[q >> 4];
      }
      sum += F16ToF32(xb.d) * Ue4m3Scale(w[b].d[s]) * static_cast<float>(sumi);
    }
  }
  return sum;
}

float DotFP8_E4M3(const BlockFP8_E4M3* w, const float* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    for (int i = 0; i < kQKNV; ++i) sum += E4m3ToF32(w[b].q[i]) * w[b].d * x[b * kQKNV + i];
  }
  return sum;
}

// FP8x4 (repack.h): each row's blocks gathered back into row-major order, then DotFP8_E4M3.
void GemmFP8x4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* groups = static_cast<const BlockFP8x4*>(w.data);
  std::vector<BlockFP8_E4M3> row(static_cast<size_t>(nb));
  for (int64_t r = r0; r < r1; ++r) {
    const BlockFP8x4* g = groups + (r / kFP8x4Rows) * nb;
    const int lane = static_cast<int>(r % kFP8x4Rows);
    for (int64_t b = 0; b < nb; ++b) {
      row[b].d = g[b].d[lane];
      std::memcpy(row[b].q, g[b].q[lane], kQKNV);
    }
    for (int64_t t = t0; t < t1; ++t)
      y[t * ldy + r] =
          DotFP8_E4M3(row.data(), reinterpret_cast<const float*>(static_cast<const uint8_t*>(xa) + t * xs), nb);
  }
}

PG_GEMM_AS(GemmNVFP4, (GemmByDot<BlockNVFP4, BlockQ8_0, DotNVFP4>), kQKNV)
PG_GEMM_AS(GemmFP8_E4M3, (GemmByDot<BlockFP8_E4M3, float, DotFP8_E4M3>), kQKNV)

}  // namespace pg::scalar
