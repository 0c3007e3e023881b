// AVX2 GEMM over the repacked K-quants Q4_Kx8, Q5_Kx8 and Q6_Kx8 (repack.h): tiles
// of one 8-row group x up to 4 tokens, one row per 32-bit lane.
//
// Q4_Kx8: per 32-byte load of weights (4 columns of sub-blocks 2p and 2p + 1
// for the 8 rows) the low and high nibbles meet the token's 4 matching quants
// of each sub-block, broadcast: maddubs gives int16 pair sums, which add up
// in int16 over the loads of one sub-block; then one madd against the rows'
// sub-block scales (each row's scale in both int16 halves of its lane) adds
// sc * (the sub-block's products) to the row's int32 sum. The mins pair with
// the token's bsums through one madd per sub-block pair. After a super-block
// each lane holds its row's exact isum and msum: two cvt and two FMAs.
//
// Q5_Kx8: Q4_Kx8 with levels 0..31: per nibble load, the matching 32-byte
// load of fifth bits gives, in its bits 2p and 2p + 1, 16 to OR into the low
// and high nibbles.
//
// Q6_Kx8: the same with 6-bit levels (ql nibble | 2 bits of qh << 4) and
// signed int8 scales per 16; the -32 offset is 32 * sum_j sc_j bsum_j, taken
// off the int32 sum before its one FMA.
//
// The int16 partials never overflow (each Sums says why), and every sum is
// an exact integer, so the results are scalar::GemmQ4_Kx8 / GemmQ5_Kx8 /
// GemmQ6_Kx8's bit for bit.
#include <type_traits>

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
// Q4_Kx8's levels are the nibbles; Q5_Kx8's OR in 16 where the fifth bit is
// set (bits 2p and 2p + 1 of the qh load matching the nibbles). The maddubs
// pair sums of one sub-block add up in int16 over kRun loads before one madd
// applies the sub-block's scale: |pair| <= 2 * 15 * 128, so eight of them
// (a Q4_K sub-block's 32 columns) fit; Q5_K's levels go to 31, four. Integer
// sums, so the result is the scalar one whatever the order.
template <typename Block>
struct K4Sums {
  static constexpr int kRun = std::is_same_v<Block, BlockQ5_Kx8> ? 4 : 8;
  // Q4_Kx8 takes a tile of four tokens at once: their eight int16 partials
  // fill the registers beside the loads (GCC spills two of them), but each
  // load's nibbles are extracted once for four tokens, not twice (~3% in
  // cache, docs/performance.md "Matrix kernels"). Q5_Kx8's fifth bits need
  // registers too: four at once lose there, so it goes two at a time.
  template <int RN>
  void operator()(Ymm, const Block& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    if constexpr (RN <= 2 || (RN == 4 && kRun == 8)) {
      Tokens<RN>(blk, xb, isum);
    } else {
      Tokens<2>(blk, xb, isum);
      Tokens<RN - 2>(blk, xb + 2, isum + 2);
    }
  }

  template <int JN>
  [[gnu::always_inline]] static void Tokens(const Block& blk, const BlockQ8_K* const* xb, __m256i* isum) {
    for (int p = 0; p < 4; ++p) {
      for (int k0 = 0; k0 < 8; k0 += kRun) {
        __m256i plo[JN], phi[JN];
        for (int j = 0; j < JN; ++j) plo[j] = phi[j] = _mm256_setzero_si256();
          // Unrolled further, GCC hoists the broadcasts and spills.
#pragma GCC unroll 2
        for (int k = k0; k < k0 + kRun; ++k) {
          __m256i lo, hi;
          Nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 256 * p + 32 * k)), &lo, &hi);
          if constexpr (std::is_same_v<Block, BlockQ5_Kx8>) {
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * k));
            lo = _mm256_or_si256(lo, FifthBit(qh, 2 * p));
            hi = _mm256_or_si256(hi, FifthBit(qh, 2 * p + 1));
          }
          for (int j = 0; j < JN; ++j) {
            const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
            plo[j] = _mm256_add_epi16(plo[j], _mm256_maddubs_epi16(lo, Broadcast4(xq)));
            phi[j] = _mm256_add_epi16(phi[j], _mm256_maddubs_epi16(hi, Broadcast4(xq + 32)));
          }
        }
        const __m256i s_lo = RowScales16(blk.sc[2 * p]), s_hi = RowScales16(blk.sc[2 * p + 1]);
        for (int j = 0; j < JN; ++j)
          isum[j] = _mm256_add_epi32(
              isum[j], _mm256_add_epi32(_mm256_madd_epi16(plo[j], s_lo), _mm256_madd_epi16(phi[j], s_hi)));
      }
    }
  }
};

// int8 row scales -> each, sign-extended, in both int16 halves of its lane.
inline __m256i RowScales16Signed(const int8_t* sc8) {
  const __m256i s = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc8)));
  return _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s, 16));
}

// isum[j] += sum over the 16 sub-blocks of sc * (6-bit levels . token j's
// quants), the -32 offset left to Q6_KFinish. Loads k and k + 1 hold columns
// of the same sub-block of 16; their maddubs pair sums (|pair| <= 2 * 63 *
// 128) add up in int16 before one madd applies the scale.
struct Q6_KSums {
  template <int RN>
  void operator()(Ymm, const BlockQ6_Kx8& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 2; ++c) {
#pragma GCC unroll 1
        for (int k0 = 0; k0 < 8; k0 += 2) {
          __m256i pa[RN], pb[RN];
          for (int j = 0; j < RN; ++j) pa[j] = pb[j] = _mm256_setzero_si256();
          for (int k = k0; k < k0 + 2; ++k) {
            const __m256i vh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 256 * h + 32 * k));
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql + 512 * h + 256 * c + 32 * k));
            __m256i qa, qb;
            LevelsQ6_Kx8(v, vh, c, &qa, &qb);
            const int ea = 128 * h + 32 * c + 4 * k, eb = ea + 64;
            for (int j = 0; j < RN; ++j) {
              pa[j] = _mm256_add_epi16(pa[j], _mm256_maddubs_epi16(qa, Broadcast4(xb[j]->qs + ea)));
              pb[j] = _mm256_add_epi16(pb[j], _mm256_maddubs_epi16(qb, Broadcast4(xb[j]->qs + eb)));
            }
          }
          const int ea = 128 * h + 32 * c + 4 * k0, eb = ea + 64;
          const __m256i sa = RowScales16Signed(blk.sc[ea / 16]), sb = RowScales16Signed(blk.sc[eb / 16]);
          for (int j = 0; j < RN; ++j)
            isum[j] =
                _mm256_add_epi32(isum[j], _mm256_add_epi32(_mm256_madd_epi16(pa[j], sa), _mm256_madd_epi16(pb[j], sb)));
        }
      }
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ4_Kx8, BlockQ4_Kx8, kQKK, Ymm, void, TileX8, K4Sums<BlockQ4_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ5_Kx8, BlockQ5_Kx8, kQKK, Ymm, void, TileX8, K4Sums<BlockQ5_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ6_Kx8, BlockQ6_Kx8, kQKK, Ymm, void, TileX8, Q6_KSums{}, Q6_KFinish{})

}  // namespace pg::avx2
