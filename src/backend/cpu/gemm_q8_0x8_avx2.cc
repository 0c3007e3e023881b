// AVX2 GEMM over Q8_0x8 weights (repack.h): tiles of one 8-row group x up to
// 4 tokens. Per 32-byte load of weights (4 columns of the 8 rows, one row per
// 32-bit lane) and per token: broadcast the token's 4 quants, sign + maddubs
// + madd + add into the row's int32 block sum. After the block's 8 loads each
// lane holds its row's exact block sum: one cvt and one FMA with the 8 row
// scales times the token's scale. Same operations as scalar::GemmQ8_0x8.
#include <algorithm>
#include <cstring>

#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {
namespace {

template <int RN>
void TileQ8_0x8(const BlockQ8_0x8* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ8_0x8& blk = g[b];
    const BlockQ8_0* xb[RN];
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      isum[j] = _mm256_setzero_si256();
    }
    for (int k = 0; k < kQK / 4; ++k) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + kQK * k));
      // maddubs needs an unsigned operand: |w| (128 for -128, still exact)
      // against x with w's sign. Activations are in [-127, 127].
      const __m256i w_abs = _mm256_sign_epi8(w, w);
      for (int j = 0; j < RN; ++j) {
        int32_t x4;
        std::memcpy(&x4, xb[j]->qs + 4 * k, 4);
        const __m256i p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(_mm256_set1_epi32(x4), w));
        isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p16, ones));
      }
    }
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

}  // namespace

void GemmQ8_0x8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                int64_t r1, float* y, int64_t ldy) {
  constexpr int RN = 4;
  const int64_t nb = w.cols / kQK;
  const auto* groups = static_cast<const BlockQ8_0x8*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  // Tasks start on a group boundary (MatMul's row blocks are multiples of 8);
  // a range that does not is computed from its group's start all the same.
  for (int64_t g0 = r0 / kQ8_0x8Rows * kQ8_0x8Rows; g0 < r1; g0 += kQ8_0x8Rows) {
    const BlockQ8_0x8* g = groups + (g0 / kQ8_0x8Rows) * nb;
    const int64_t lo = std::max(g0, r0), hi = std::min(g0 + kQ8_0x8Rows, r1);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      __m256 out[RN];
      const uint8_t* xt = xbase + t * xs;
      switch (rn) {
        case 4: TileQ8_0x8<4>(g, nb, xt, xs, out); break;
        case 3: TileQ8_0x8<3>(g, nb, xt, xs, out); break;
        case 2: TileQ8_0x8<2>(g, nb, xt, xs, out); break;
        default: TileQ8_0x8<1>(g, nb, xt, xs, out); break;
      }
      for (int j = 0; j < rn; ++j) {
        float* yt = y + (t + j) * ldy;
        if (lo == g0 && hi == g0 + kQ8_0x8Rows) {
          _mm256_storeu_ps(yt + g0, out[j]);
        } else {
          alignas(32) float v[kQ8_0x8Rows];
          _mm256_store_ps(v, out[j]);
          for (int64_t r = lo; r < hi; ++r) yt[r] = v[r - g0];
        }
      }
    }
  }
}

}  // namespace pg::avx2
