// AVX2 GEMM over Q8_0x8 weights (repack.h): tiles of one 8-row group x up to
// 4 tokens. Per 32-byte load of weights (4 columns of the 8 rows, one row per
// 32-bit lane) and per token: broadcast the token's 4 quants, sign + maddubs
// + madd + add into the row's int32 block sum. After the block's 8 loads each
// lane holds its row's exact block sum: one cvt and one FMA with the 8 row
// scales times the token's scale. Same operations as scalar::GemmQ8_0x8.
#include "backend/cpu/gemm_groups_of8.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {
namespace {

// isum[j] += the 32 weights of each row . token j's 32 quants.
struct Q8_0Sums {
  template <int RN>
  void operator()(Ymm, const BlockQ8_0x8& blk, const BlockQ8_0* const (&xb)[RN], __m256i (&isum)[RN]) const {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int k = 0; k < kQK / 4; ++k) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + kQK * k));
      // maddubs needs an unsigned operand: |w| (128 for -128, still exact)
      // against x with w's sign. Activations are in [-127, 127].
      const __m256i w_abs = _mm256_sign_epi8(w, w);
      for (int j = 0; j < RN; ++j) {
        const __m256i p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(Broadcast4(xb[j]->qs + 4 * k), w));
        isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p16, ones));
      }
    }
  }
};

// acc[j] += (the rows' scales * token j's scale) * isum[j].
struct Q8_0Finish {
  using XBlock = BlockQ8_0;
  template <int RN>
  void operator()(Ymm, const BlockQ8_0x8& blk, const BlockQ8_0* const (&xb)[RN], const __m256i (&isum)[RN],
                  __m256 (&acc)[RN]) const {
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ8_0x8, BlockQ8_0x8, kQK, Ymm, void, TileX8, Q8_0Sums{}, Q8_0Finish{})

}  // namespace pg::avx2
