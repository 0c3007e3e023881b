// AVX-512 VNNI GEMM over the 8-row repacked layouts Q8_0x8, Q5_0x8, Q4_Kx8,
// Q5_Kx8 and Q6_Kx8 (repack.h): tiles of one 8-row group x up to 4 tokens, one row per
// 32-bit lane of a 256-bit vector (AVX-512VL), as the AVX2 kernels. Where
// AVX2 needs broadcast + maddubs + madd + add per 32-byte load and token,
// VPDPBUSD (u8 x s8, four products added into each int32 lane) does it in one
// instruction, with the token's 4 quants as an embedded broadcast:
//
// - Q4_Kx8 / Q5_Kx8 / Q6_Kx8: the levels are unsigned (nibbles, with Q5_K's
//   fifth bits; 6-bit levels before the -32 offset), so they are VPDPBUSD's u8 operand as they are. The
//   products of one sub-block (32 columns for Q4_K, 16 for Q6_K) are summed
//   in their own int32 lanes, then multiplied by the rows' sub-block scales
//   (VPMULLD) into the super-block sum.
// - Q8_0x8 / Q5_0x8: the levels are signed, so the token's quants are made unsigned
//   (x + 128, once per block and token) and the weights are the s8 operand:
//   sum (x + 128) w - 128 sum w, where 128 sum w comes from one more VPDPBUSD
//   per load against bytes of 128, shared by the tile's tokens.
//
// Every sum is the exact integer the AVX2 and scalar kernels compute, and the
// float steps after it are theirs, so the results are bit-identical to
// scalar::GemmQ8_0x8 / GemmQ5_0x8 / GemmQ4_Kx8 / GemmQ5_Kx8 / GemmQ6_Kx8.
// GCC 12's AVX-512 intrinsics raise false -W(maybe-)uninitialized warnings
// when inlined (see gemm_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <type_traits>

#include "backend/cpu/gemm_groups_of8.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"

namespace pg::avx512 {
namespace {

inline __m256i Load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// One Q8_0x8 / Q5_0x8 tile: 8 rows x RN tokens over nb blocks. Per block the
// tokens' quants are made unsigned (xu = x + 128), sums(blk, xu, isum, &wsum)
// adds sum (x + 128) w to isum[j] and 128 sum w to wsum; their difference
// meets the scales in one FMA.
template <int RN, typename Block, typename Sums>
void TileSigned8(const Block* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out, Sums sums) {
  const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const Block& blk = g[b];
    const BlockQ8_0* xb[RN];
    alignas(32) uint8_t xu[RN][kQK];  // the token's quants + 128
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      _mm256_store_si256(reinterpret_cast<__m256i*>(xu[j]), _mm256_xor_si256(Load256(xb[j]->qs), k128));
      isum[j] = _mm256_setzero_si256();
    }
    __m256i wsum = _mm256_setzero_si256();  // 128 * sum w, per row
    sums(blk, xu, isum, &wsum);
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum[j], wsum)), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

struct Q8_0Sums {
  template <int RN>
  void operator()(const BlockQ8_0x8& blk, const uint8_t (&xu)[RN][kQK], __m256i (&isum)[RN], __m256i* wsum) const {
    const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int k = 0; k < kQK / 4; ++k) {
      const __m256i w = Load256(blk.qs + kQK * k);
      *wsum = _mm256_dpbusd_epi32(*wsum, k128, w);
      for (int j = 0; j < RN; ++j) isum[j] = _mm256_dpbusd_epi32(isum[j], Broadcast4(xu[j] + 4 * k), w);
    }
  }
};

// Q5_0x8: the signed levels rebuilt per load from the nibbles: the low
// (h = 0) and high (h = 1) nibbles, minus 16 in the bytes whose fifth bit is
// 0 (one masked subtract each).
struct Q5_0Sums {
  template <int RN>
  void operator()(const BlockQ5_0x8& blk, const uint8_t (&xu)[RN][kQK], __m256i (&isum)[RN], __m256i* wsum) const {
    const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80)), k16 = _mm256_set1_epi8(16);
    for (int k = 0; k < kQK / 8; ++k) {
      __m256i lo, hi;
      Nibbles(Load256(blk.qs + 32 * k), &lo, &hi);
      lo = _mm256_mask_sub_epi8(lo, _cvtu32_mask32(blk.low16[k][0]), lo, k16);
      hi = _mm256_mask_sub_epi8(hi, _cvtu32_mask32(blk.low16[k][1]), hi, k16);
      *wsum = _mm256_dpbusd_epi32(*wsum, k128, _mm256_add_epi8(lo, hi));
      for (int j = 0; j < RN; ++j) {
        isum[j] = _mm256_dpbusd_epi32(isum[j], Broadcast4(xu[j] + 4 * k), lo);
        isum[j] = _mm256_dpbusd_epi32(isum[j], Broadcast4(xu[j] + 16 + 4 * k), hi);
      }
    }
  }
};

// isum[j] += sum over the 8 sub-blocks of sc * (levels . token j's quants):
// each sub-block's products summed in its own lanes, then VPMULLD by the
// rows' scales. Q4_Kx8's levels are the nibbles; Q5_Kx8's add 16 where the
// fifth bit is set (bit 2p or 2p + 1 of the qh load matching the nibbles):
// one masked byte add per nibble vector, VPTESTMB giving the mask.
template <typename Block>
struct K4Sums {
  template <int RN>
  void operator()(const Block& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    for (int p = 0; p < 4; ++p) {
      __m256i s_lo[RN], s_hi[RN];  // sub-blocks 2p and 2p + 1
      for (int j = 0; j < RN; ++j) s_lo[j] = s_hi[j] = _mm256_setzero_si256();
      for (int k = 0; k < 8; ++k) {
        __m256i lo, hi;
        Nibbles(Load256(blk.qs + 256 * p + 32 * k), &lo, &hi);
        if constexpr (std::is_same_v<Block, BlockQ5_Kx8>) {
          const __m256i qh = Load256(blk.qh + 32 * k), k16 = _mm256_set1_epi8(16);
          lo = _mm256_mask_add_epi8(lo, _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * p)))),
                                    lo, k16);
          hi = _mm256_mask_add_epi8(hi, _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * p)))),
                                    hi, k16);
        }
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          s_lo[j] = _mm256_dpbusd_epi32(s_lo[j], lo, Broadcast4(xq));
          s_hi[j] = _mm256_dpbusd_epi32(s_hi[j], hi, Broadcast4(xq + 32));
        }
      }
      const __m256i sc_lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * p])));
      const __m256i sc_hi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * p + 1])));
      for (int j = 0; j < RN; ++j) {
        isum[j] = _mm256_add_epi32(
            isum[j], _mm256_add_epi32(_mm256_mullo_epi32(s_lo[j], sc_lo), _mm256_mullo_epi32(s_hi[j], sc_hi)));
      }
    }
  }
};

// As K4Sums, per 16-column sub-block of the 6-bit levels; the -32 offset
// is left to Q6_KFinish.
struct Q6_KSums {
  template <int RN>
  void operator()(const BlockQ6_Kx8& blk, const BlockQ8_K* const (&xb)[RN], __m256i (&isum)[RN]) const {
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 2; ++c) {
        for (int half = 0; half < 2; ++half) {  // 4 loads = one 16-column sub-block of each of a and b
          __m256i pa[RN], pb[RN];
          for (int j = 0; j < RN; ++j) pa[j] = pb[j] = _mm256_setzero_si256();
          for (int k = 4 * half; k < 4 * half + 4; ++k) {
            __m256i qa, qb;
            LevelsQ6_Kx8(Load256(blk.ql + 512 * h + 256 * c + 32 * k), Load256(blk.qh + 256 * h + 32 * k), c, &qa, &qb);
            const int ea = 128 * h + 32 * c + 4 * k;
            for (int j = 0; j < RN; ++j) {
              pa[j] = _mm256_dpbusd_epi32(pa[j], qa, Broadcast4(xb[j]->qs + ea));
              pb[j] = _mm256_dpbusd_epi32(pb[j], qb, Broadcast4(xb[j]->qs + ea + 64));
            }
          }
          const int ea = 128 * h + 32 * c + 16 * half, eb = ea + 64;
          const __m256i sa = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[ea / 16])));
          const __m256i sb = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[eb / 16])));
          for (int j = 0; j < RN; ++j) {
            isum[j] = _mm256_add_epi32(isum[j],
                                       _mm256_add_epi32(_mm256_mullo_epi32(pa[j], sa), _mm256_mullo_epi32(pb[j], sb)));
          }
        }
      }
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ8_0x8, BlockQ8_0x8, kQK, TileSigned8, Q8_0Sums{})
PG_GEMM_GROUPS_OF8(GemmQ5_0x8, BlockQ5_0x8, kQK, TileSigned8, Q5_0Sums{})
PG_GEMM_GROUPS_OF8(GemmQ4_Kx8, BlockQ4_Kx8, kQKK, TileX8, K4Sums<BlockQ4_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ5_Kx8, BlockQ5_Kx8, kQKK, TileX8, K4Sums<BlockQ5_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ6_Kx8, BlockQ6_Kx8, kQKK, TileX8, Q6_KSums{}, Q6_KFinish{})

}  // namespace pg::avx512
