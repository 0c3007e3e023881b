// Private: what the AVX2 and AVX-512 GEMM kernels over the 8-row repacked
// layouts (repack.h: Q8_0x8, Q5_0x8, Q4_Kx8, Q5_Kx8, Q6_Kx8) share: the driver that
// walks groups and token tiles, and the min / offset sums of the K-quant
// tiles. Include only from files compiled with -mavx2 -mfma -mf16c (or more).
//
// Everything here sits in an unnamed namespace on purpose: each ISA's file
// gets its own copy, compiled with its own flags. An inline function shared
// by the AVX2 and AVX-512 files could be linked from the AVX-512 copy and
// then run on a host without AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"

namespace pg {
namespace {  // NOLINT(build/namespaces): see above

// A 32-bit word of 4 int8 quants (a token's 4 quants), in every lane.
inline __m256i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Runs tile(std::integral_constant<int, RN>{}, group, nb, x, xs, out) over
// every 8-row group and token tile (RN <= 4 tokens) of [r0, r1) x [t0, t1):
// out[j] holds the 8 rows' results for token t + j. Tasks start on a group
// boundary (MatMul's row blocks are multiples of 8); a range that does not
// is computed from its group's start all the same. `block_cols` is the
// columns one Block holds per row.
template <typename Block, typename Tile>
inline void GemmGroupsOf8(const WeightMatrix& w, int64_t block_cols, const void* xa, size_t xs, int64_t t0,
                          int64_t t1, int64_t r0, int64_t r1, float* y, int64_t ldy, Tile tile) {
  constexpr int kRows = 8, RN = 4;
  const int64_t nb = w.cols / block_cols;
  const auto* groups = static_cast<const Block*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t g0 = r0 / kRows * kRows; g0 < r1; g0 += kRows) {
    const Block* g = groups + (g0 / kRows) * nb;
    const int64_t lo = std::max(g0, r0), hi = std::min(g0 + kRows, r1);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      __m256 out[RN];
      const uint8_t* xt = xbase + t * xs;
      switch (rn) {
        case 4: tile(std::integral_constant<int, 4>{}, g, nb, xt, xs, out); break;
        case 3: tile(std::integral_constant<int, 3>{}, g, nb, xt, xs, out); break;
        case 2: tile(std::integral_constant<int, 2>{}, g, nb, xt, xs, out); break;
        default: tile(std::integral_constant<int, 1>{}, g, nb, xt, xs, out); break;
      }
      for (int j = 0; j < rn; ++j) {
        float* yt = y + (t + j) * ldy;
        if (lo == g0 && hi == g0 + kRows) {
          _mm256_storeu_ps(yt + g0, out[j]);
        } else {
          alignas(32) float v[kRows];
          _mm256_store_ps(v, out[j]);
          for (int64_t r = lo; r < hi; ++r) yt[r] = v[r - g0];
        }
      }
    }
  }
}

// The low (*lo) and high (*hi) nibbles of the 32 bytes of v.
inline void Nibbles(__m256i v, __m256i* lo, __m256i* hi) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  *lo = _mm256_and_si256(v, m4);
  *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
}

// The 6-bit levels of Q6_Kx8 columns c (0 or 1) of a 32-byte load: qa from
// the low nibbles of v, qb from the high ones, each with its 2 bits of vh.
inline void LevelsQ6_Kx8(__m256i v, __m256i vh, int c, __m256i* qa, __m256i* qb) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
  *qa = _mm256_or_si256(_mm256_and_si256(v, m4),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 2 * c), m3), 4));
  *qb = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 4 + 2 * c), m3), 4));
}

// One tile: 8 rows x RN tokens over nb blocks. Per block sums(blk, xb, isum)
// adds each token j's integer sum of (scale *) levels . quants into isum[j],
// the ISA's own part, over the token's Finish::XBlock (BlockQ8_0 or
// BlockQ8_K); finish(blk, xb, isum, acc) (Q4_KFinish, Q6_KFinish) adds the
// block's floats to acc[j].
template <int RN, typename Block, typename Sums, typename Finish>
inline void TileX8(const Block* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out, Sums sums,
                   Finish finish) {
  using XBlock = typename Finish::XBlock;
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const Block& blk = g[b];
    const XBlock* xb[RN];
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const XBlock*>(xbase + j * xs) + b;
      isum[j] = _mm256_setzero_si256();
    }
    sums(blk, xb, isum);
    finish(blk, xb, isum, acc);
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// Q4_Kx8 and Q5_Kx8 (the same d, dmin and m): d * isum - dmin * (sum over
// the 8 sub-blocks of min * the token's bsums of the sub-block), per row lane.
struct Q4_KFinish {
  using XBlock = BlockQ8_K;
  template <int RN, typename Block>
  void operator()(const Block& blk, const BlockQ8_K* const (&xb)[RN], const __m256i (&isum)[RN],
                  __m256 (&acc)[RN]) const {
    __m256i mins[4];  // lane r: (m[p][r][0], m[p][r][1]) as int16
    for (int p = 0; p < 4; ++p) mins[p] = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.m[p])));
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    const __m256 wm = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.dmin)));
    for (int j = 0; j < RN; ++j) {
      const int16_t* bs = xb[j]->bsums;
      __m256i msum = _mm256_setzero_si256();
      for (int p = 0; p < 4; ++p) {
        const uint32_t b0 = static_cast<uint16_t>(bs[4 * p] + bs[4 * p + 1]);
        const uint32_t b1 = static_cast<uint16_t>(bs[4 * p + 2] + bs[4 * p + 3]);
        const __m256i pair = _mm256_set1_epi32(static_cast<int32_t>(b0 | (b1 << 16)));
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mins[p], pair));
      }
      const __m256 xd = _mm256_set1_ps(xb[j]->d);
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd), _mm256_cvtepi32_ps(isum[j]), acc[j]);
      acc[j] = _mm256_fnmadd_ps(_mm256_mul_ps(wm, xd), _mm256_cvtepi32_ps(msum), acc[j]);
    }
  }
};

// Q6_Kx8: d * (isum - 32 * sum over the 16 sub-blocks of scale * the token's
// bsum of the sub-block), per row lane: the levels' -32 offset.
struct Q6_KFinish {
  using XBlock = BlockQ8_K;
  template <int RN>
  void operator()(const BlockQ6_Kx8& blk, const BlockQ8_K* const (&xb)[RN], const __m256i (&isum)[RN],
                  __m256 (&acc)[RN]) const {
    __m256i scp[8];  // lane r: (sc[2i][r], sc[2i + 1][r]) as int16
    for (int i = 0; i < 8; ++i) {
      const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * i]));
      const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * i + 1]));
      scp[i] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, c));
    }
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const int16_t* bs = xb[j]->bsums;
      __m256i msum = _mm256_setzero_si256();
      for (int i = 0; i < 8; ++i) {
        const uint32_t pair =
            static_cast<uint16_t>(bs[2 * i]) | (static_cast<uint32_t>(static_cast<uint16_t>(bs[2 * i + 1])) << 16);
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(scp[i], _mm256_set1_epi32(static_cast<int32_t>(pair))));
      }
      const __m256i total = _mm256_sub_epi32(isum[j], _mm256_slli_epi32(msum, 5));
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_set1_ps(xb[j]->d)), _mm256_cvtepi32_ps(total), acc[j]);
    }
  }
};

}  // namespace
}  // namespace pg

// Defines the GemmTileFn NAME: GemmGroupsOf8 over BLOCKs of COLS columns per
// row, each token tile run by TILE<RN>(group, nb, x, xs, out, EXTRA...).
#define PG_GEMM_GROUPS_OF8(NAME, BLOCK, COLS, TILE, ...)                                                     \
  void NAME(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, \
            float* y, int64_t ldy) {                                                                          \
    GemmGroupsOf8<BLOCK>(w, COLS, xa, xs, t0, t1, r0, r1, y, ldy,                                             \
                         [](auto rn, auto... a) { TILE<decltype(rn)::value>(a... __VA_OPT__(, ) __VA_ARGS__); }); \
  }
