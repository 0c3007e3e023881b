// AVX-512 VNNI GEMM over the repacked Q5_Kx8 (repack.h), as Q4_Kx8 in
// gemm_x8_avx512.cc: the levels (nibble | fifth bit << 4, 0..31) are
// VPDPBUSD's unsigned operand, each sub-block's products summed in its own
// int32 lanes and then multiplied by the rows' sub-block scales (VPMULLD).
// The fifth bits are one masked byte add of 16 per nibble vector (VPTESTMB
// gives the mask of the bytes whose bit 2p or 2p + 1 is set).
//
// The sums are the exact integers of scalar::GemmQ5_Kx8 and the float steps
// after them its own (Q4_KFinish), so the results are bit-identical.
// GCC 12's AVX-512 intrinsics raise false -W(maybe-)uninitialized warnings
// when inlined (see gemm_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "backend/cpu/gemm_groups_of8.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"

namespace pg::avx512 {
namespace {

inline __m256i Load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The rows' 8 sub-block scales (bytes), one per 32-bit lane.
inline __m256i RowScales32(const uint8_t* sc8) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc8)));
}

struct Q5_KSums {
  template <int RN>
  void operator()(const BlockQ5_Kx8& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    const __m256i k16 = _mm256_set1_epi8(16);
    for (int p = 0; p < 4; ++p) {
      const __m256i bit_lo = _mm256_set1_epi8(static_cast<char>(1 << (2 * p)));
      const __m256i bit_hi = _mm256_set1_epi8(static_cast<char>(2 << (2 * p)));
      __m256i s_lo[RN], s_hi[RN];  // sub-blocks 2p and 2p + 1
      for (int j = 0; j < RN; ++j) s_lo[j] = s_hi[j] = _mm256_setzero_si256();
      for (int k = 0; k < 8; ++k) {
        __m256i lo, hi;
        Nibbles(Load256(blk.qs + 256 * p + 32 * k), &lo, &hi);
        const __m256i qh = Load256(blk.qh + 32 * k);
        lo = _mm256_mask_add_epi8(lo, _mm256_test_epi8_mask(qh, bit_lo), lo, k16);
        hi = _mm256_mask_add_epi8(hi, _mm256_test_epi8_mask(qh, bit_hi), hi, k16);
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          s_lo[j] = _mm256_dpbusd_epi32(s_lo[j], lo, Broadcast4(xq));
          s_hi[j] = _mm256_dpbusd_epi32(s_hi[j], hi, Broadcast4(xq + 32));
        }
      }
      const __m256i sc_lo = RowScales32(blk.sc[2 * p]), sc_hi = RowScales32(blk.sc[2 * p + 1]);
      for (int j = 0; j < RN; ++j) {
        isum[j] = _mm256_add_epi32(
            isum[j], _mm256_add_epi32(_mm256_mullo_epi32(s_lo[j], sc_lo), _mm256_mullo_epi32(s_hi[j], sc_hi)));
      }
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ5_Kx8, BlockQ5_Kx8, kQKK, TileX8, Q5_KSums{}, Q4_KFinish{})

}  // namespace pg::avx512
