// AVX2 GEMM over the repacked Q5_Kx8 (repack.h): tiles of one 8-row group x
// up to 4 tokens, one row per 32-bit lane, as Q4_Kx8 (gemm_k_x8_avx2.cc).
//
// Per 32-byte load of nibbles (4 columns of sub-blocks 2p and 2p + 1 for the
// 8 rows) the matching 32-byte load of fifth bits gives, in its bits 2p and
// 2p + 1, 16 to add to the low and high nibbles: levels 0..31, then
// maddubs against the token's quants and madd against the rows' sub-block
// scales, as Q4_Kx8. The mins and the two FMAs are Q4_KFinish.
//
// Same operations as scalar::GemmQ5_Kx8, so bit-identical.
#include "backend/cpu/gemm_groups_of8.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {
namespace {

// 8 row scales (bytes) -> each in both int16 halves of its 32-bit lane.
inline __m256i RowScales16(const uint8_t* sc8) {
  const __m256i s = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc8)));
  return _mm256_or_si256(s, _mm256_slli_epi32(s, 16));
}

// 16 in each byte of `qh` whose bit `bit` is set, else 0.
inline __m256i FifthBit(__m256i qh, int bit) {
  const __m256i m = _mm256_set1_epi8(static_cast<char>(1 << bit));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, m), m), _mm256_set1_epi8(16));
}

// isum[j] += sum over the 8 sub-blocks of sc * (levels . token j's quants).
struct Q5_KSums {
  template <int RN>
  void operator()(const BlockQ5_Kx8& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    for (int p = 0; p < 4; ++p) {
      const __m256i s_lo = RowScales16(blk.sc[2 * p]), s_hi = RowScales16(blk.sc[2 * p + 1]);
      for (int k = 0; k < 8; ++k) {
        __m256i lo, hi;
        Nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 256 * p + 32 * k)), &lo, &hi);
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * k));
        lo = _mm256_or_si256(lo, FifthBit(qh, 2 * p));
        hi = _mm256_or_si256(hi, FifthBit(qh, 2 * p + 1));
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          const __m256i a = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, Broadcast4(xq)), s_lo);
          const __m256i c = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, Broadcast4(xq + 32)), s_hi);
          isum[j] = _mm256_add_epi32(isum[j], _mm256_add_epi32(a, c));
        }
      }
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ5_Kx8, BlockQ5_Kx8, kQKK, TileX8, Q5_KSums{}, Q4_KFinish{})

}  // namespace pg::avx2
