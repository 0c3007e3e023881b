// AVX2 GEMM over Q8_0x8 and Q5_0x8 weights (repack.h): tiles of one 8-row
// group x up to 4 tokens. Per 32-byte load of weights (4 columns of the 8
// rows, one row per 32-bit lane) and per token: broadcast the token's 4
// quants, sign + maddubs into int16 pair sums; Q8_0x8 widens each load's to
// int32 with a madd (a pair reaches 32,512: no room to add two), Q5_0x8's
// levels are small enough to add the block's eight first. After the block
// each lane holds its row's exact block sum: one cvt and one FMA with the 8
// row scales times the token's scale. Exact integer sums and the float steps
// of scalar::GemmQ8_0x8 / GemmQ5_0x8 (whose levels are Q8_0x8's of the same
// matrix), so the same bits.
#include <cstdint>
#include <cstring>

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

// The fifth-bit masks of a load's two halves, low16[k][0] and [1]: byte b of
// *m0 (*m1) is 0xFF where bit b of the first (second) word is set.
inline void ByteMasks(const uint32_t* bits, __m256i* m0, __m256i* m1) {
  const __m256i spread0 = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                           2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i spread1 = _mm256_add_epi8(spread0, _mm256_set1_epi8(4));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  int64_t both;
  std::memcpy(&both, bits, 8);
  const __m256i b = _mm256_set1_epi64x(both);
  *m0 = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(b, spread0), bit), bit);
  *m1 = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(b, spread1), bit), bit);
}

// Q5_0x8: per load the nibbles of the low (h = 0) and high (h = 1) half,
// minus 16 where low16[k][h] says the fifth bit is 0: levels in [-16, 15].
// With |level| <= 16 and |x| <= 127 (Q8_0 activations) a pair sum is at most
// 4064 in magnitude, so the block's 8 maddubs results add up in int16
// (32512) before one madd.
struct Q5_0Sums {
  template <int RN>
  void operator()(Ymm, const BlockQ5_0x8& blk, const BlockQ8_0* const (&xb)[RN], __m256i (&isum)[RN]) const {
    const __m256i k16 = _mm256_set1_epi8(16);
    __m256i p16[RN];
    for (int j = 0; j < RN; ++j) p16[j] = _mm256_setzero_si256();
    for (int k = 0; k < kQK / 8; ++k) {
      __m256i lo, hi;
      Nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * k)), &lo, &hi);
      __m256i m0, m1;
      ByteMasks(blk.low16[k], &m0, &m1);
      lo = _mm256_sub_epi8(lo, _mm256_and_si256(m0, k16));
      hi = _mm256_sub_epi8(hi, _mm256_and_si256(m1, k16));
      const __m256i lo_abs = _mm256_sign_epi8(lo, lo), hi_abs = _mm256_sign_epi8(hi, hi);
      for (int j = 0; j < RN; ++j) {
        const __m256i a = _mm256_maddubs_epi16(lo_abs, _mm256_sign_epi8(Broadcast4(xb[j]->qs + 4 * k), lo));
        const __m256i b = _mm256_maddubs_epi16(hi_abs, _mm256_sign_epi8(Broadcast4(xb[j]->qs + 16 + 4 * k), hi));
        p16[j] = _mm256_add_epi16(p16[j], _mm256_add_epi16(a, b));
      }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int j = 0; j < RN; ++j) isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p16[j], ones));
  }
};

// acc[j] += (the rows' scales * token j's scale) * isum[j].
struct Q8_0Finish {
  using XBlock = BlockQ8_0;
  template <int RN, typename Block>
  void operator()(Ymm v, const Block& blk, const BlockQ8_0* const (&xb)[RN], const __m256i (&isum)[RN],
                  __m256 (&acc)[RN]) const {
    const __m256 wd = v.Halves(blk.d);
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ8_0x8, BlockQ8_0x8, kQK, Ymm, void, TileX8, Q8_0Sums{}, Q8_0Finish{})
PG_GEMM_GROUPS_OF8(GemmQ5_0x8, BlockQ5_0x8, kQK, Ymm, void, TileX8, Q5_0Sums{}, Q8_0Finish{})

}  // namespace pg::avx2
