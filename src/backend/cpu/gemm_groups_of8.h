// Private: what the AVX2 and AVX-512 GEMM kernels over the 8-row repacked
// layouts (repack.h: Q8_0x8, Q5_0x8, Q4_Kx8, Q5_Kx8, Q6_Kx8) share: the driver that
// walks groups (one, or two at a time) and token tiles, the 256-bit vectors
// of one group (Ymm), and the min / offset sums of the K-quant tiles, written
// once for any such vector type (gemm_groups_of8_avx512.h adds Zmm, two groups
// in 512 bits). Include only from files compiled with -mavx2 -mfma -mf16c (or more).
//
// Everything here sits in an unnamed namespace on purpose: each ISA's file
// gets its own copy, compiled with its own flags. An inline function shared
// by the AVX2 and AVX-512 files could be linked from the AVX-512 copy and
// then run on a host without AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "base/prefetch.h"

namespace pg {
namespace {  // NOLINT(build/namespaces): see above

// A 32-bit word of 4 int8 quants (a token's 4 quants), in every lane.
inline __m256i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The 256-bit vectors of one 8-row group: row r in 32-bit lane r. The loads
// take a field of the group's Block (gemm_groups_of8_avx512.h's Zmm holds
// two groups, 16 rows, with the same members).
struct Ymm {
  using I = __m256i;
  using F = __m256;
  static constexpr int kRows = 8;
  explicit Ymm(ptrdiff_t /*next group's block, unused*/ = 0) {}

  I Load(const void* p) const { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  F Halves(const uint16_t* p) const { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  // 8 bytes (one per row) -> int32 lanes.
  I U8ToI32(const uint8_t* p) const {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  I S8ToI32(const int8_t* p) const {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // 16 bytes (two per row) -> int16 pairs.
  I U8ToI16(const uint8_t* p) const {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // 8 bytes of a and 8 of b (one per row) -> lane r: (a[r], b[r]) as int16.
  I S8PairsToI16(const int8_t* a, const int8_t* b) const {
    return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
  }

  static I Zero() { return _mm256_setzero_si256(); }
  static I Set1(int32_t v) { return _mm256_set1_epi32(v); }
  static I Set1_8(char v) { return _mm256_set1_epi8(v); }
  static I Add(I a, I b) { return _mm256_add_epi32(a, b); }
  static I Add8(I a, I b) { return _mm256_add_epi8(a, b); }
  static I Sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I Mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static I Madd16(I a, I b) { return _mm256_madd_epi16(a, b); }
  static I And(I a, I b) { return _mm256_and_si256(a, b); }
  static I Or(I a, I b) { return _mm256_or_si256(a, b); }
  static I Xor(I a, I b) { return _mm256_xor_si256(a, b); }
  static I Srli16(I a, int n) { return _mm256_srli_epi16(a, n); }
  static I Slli16(I a, int n) { return _mm256_slli_epi16(a, n); }
  static I Slli32(I a, int n) { return _mm256_slli_epi32(a, n); }
  static F FZero() { return _mm256_setzero_ps(); }
  static F Set1Ps(float v) { return _mm256_set1_ps(v); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static F Cvt(I a) { return _mm256_cvtepi32_ps(a); }
  // Rows [lo, hi) of the tile's result v to y[lo..hi).
  static void Store(float* y, F v, int lo, int hi) {
    if (lo == 0 && hi == kRows) {
      _mm256_storeu_ps(y, v);
      return;
    }
    alignas(32) float t[kRows];
    _mm256_store_ps(t, v);
    for (int r = lo; r < hi; ++r) y[r] = t[r];
  }
};

// Every token tile (RN <= 4 tokens) of [t0, t1) x the V::kRows rows from
// group pointer g: tile(v, std::integral_constant<int, RN>{}, g, nb, x, xs,
// out) leaves token t + j's results in out[j]; rows [lo, hi) of them go to y.
template <typename V, typename Block, typename Tile>
inline void RowTile(V v, const Block* g, int64_t nb, const uint8_t* xbase, size_t xs, int64_t t0, int64_t t1, float* y,
                    int64_t ldy, int lo, int hi, Tile& tile) {
  constexpr int RN = 4;
  for (int64_t t = t0; t < t1; t += RN) {
    const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
    typename V::F out[RN];
    const uint8_t* xt = xbase + t * xs;
    switch (rn) {
      case 4: tile(v, std::integral_constant<int, 4>{}, g, nb, xt, xs, out); break;
      case 3: tile(v, std::integral_constant<int, 3>{}, g, nb, xt, xs, out); break;
      case 2: tile(v, std::integral_constant<int, 2>{}, g, nb, xt, xs, out); break;
      default: tile(v, std::integral_constant<int, 1>{}, g, nb, xt, xs, out); break;
    }
    for (int j = 0; j < rn; ++j) V::Store(y + (t + j) * ldy, out[j], lo, hi);
  }
}

// How far on, in 8-row groups, a 256-bit one-token tile prefetches: the
// whole group (one contiguous run of nb Blocks) in one burst as the tile
// before it starts. An expert's matrix is a few dozen such runs, too short
// for the hardware prefetcher to reach full speed on; the burst keeps more
// lines in flight (docs/performance.md, "Matrix kernels").
constexpr int64_t kGroupsAhead = 2;

// Runs the tiles of [r0, r1) x [t0, t1): two 8-row groups at a time in V16's
// vectors (unless V16 is void) where both groups hold rows of the range, one
// in V8's otherwise (an odd last group). Tasks start on a group boundary
// (MatMul's row blocks are multiples of 8); a range that does not is
// computed from its group's start all the same. `block_cols` is the columns
// one Block holds per row. A row's result does not depend on which tile
// computed it: every lane does the same operations.
template <typename Block, typename V8, typename V16, typename Tile>
inline void GemmGroupsOf8(const WeightMatrix& w, int64_t block_cols, const void* xa, size_t xs, int64_t t0, int64_t t1,
                          int64_t r0, int64_t r1, float* y, int64_t ldy, Tile tile) {
  constexpr int kRows = 8;
  const int64_t nb = w.cols / block_cols;
  const auto next = static_cast<ptrdiff_t>(nb * sizeof(Block));  // group g's block b to group g + 1's
  const auto* groups = static_cast<const Block*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  // How far on a pair's loads prefetch (V16's tiles; without V16, the V8
  // tiles prefetch whole groups, kGroupsAhead, below). One token tile (decode)
  // reads each weight once, so the stream from DRAM sets the pace: two pairs
  // on, but never past the matrix (an expert's rows end at its matrix; the
  // next expert's are likely not wanted). Several tiles (prefill) reread the
  // pair from L1 per tile: one pair on, as far as it goes, so as not to crowd
  // out the tiles' activations.
  const bool one_tile = t1 - t0 <= 4;
  auto ahead = [&](int64_t g0) -> ptrdiff_t {
    if (!one_tile) return 2 * next;
    return g0 + 6 * kRows <= w.rows ? 4 * next : g0 + 4 * kRows <= w.rows ? 2 * next : 0;
  };
  for (int64_t g0 = r0 / kRows * kRows; g0 < r1;) {
    const Block* g = groups + (g0 / kRows) * nb;
    const int lo = static_cast<int>(std::max(g0, r0) - g0);
    if constexpr (!std::is_void_v<V16>) {
      if (g0 + kRows < r1) {
        const int hi = static_cast<int>(std::min(g0 + 2 * kRows, r1) - g0);
        RowTile(V16(next, ahead(g0)), g, nb, xbase, xs, t0, t1, y + g0, ldy, lo, hi, tile);
        g0 += 2 * kRows;
        continue;
      }
    }
    const int hi = static_cast<int>(std::min(g0 + kRows, r1) - g0);
    if constexpr (std::is_void_v<V16>) {
      if (one_tile && g0 + (kGroupsAhead + 1) * kRows <= r1)
        PrefetchLines(g + kGroupsAhead * nb, static_cast<size_t>(next));
    }
    RowTile(V8(next), g, nb, xbase, xs, t0, t1, y + g0, ldy, lo, hi, tile);
    g0 += kRows;
  }
}

// The low (*lo) and high (*hi) nibbles of the bytes of v.
template <typename V = Ymm>
inline void Nibbles(typename V::I v, typename V::I* lo, typename V::I* hi) {
  const typename V::I m4 = V::Set1_8(0x0F);
  *lo = V::And(v, m4);
  *hi = V::And(V::Srli16(v, 4), m4);
}

// The 6-bit levels of Q6_Kx8 columns c (0 or 1) of a load: qa from the low
// nibbles of v, qb from the high ones, each with its 2 bits of vh.
template <typename V = Ymm>
inline void LevelsQ6_Kx8(typename V::I v, typename V::I vh, int c, typename V::I* qa, typename V::I* qb) {
  const typename V::I m4 = V::Set1_8(0x0F), m3 = V::Set1_8(3);
  *qa = V::Or(V::And(v, m4), V::Slli16(V::And(V::Srli16(vh, 2 * c), m3), 4));
  *qb = V::Or(V::And(V::Srli16(v, 4), m4), V::Slli16(V::And(V::Srli16(vh, 4 + 2 * c), m3), 4));
}

// One tile: V::kRows rows x RN tokens over nb blocks. Per block
// sums(v, blk, xb, isum) adds each token j's integer sum of (scale *)
// levels . quants into isum[j], the ISA's own part, over the token's
// Finish::XBlock (BlockQ8_0 or BlockQ8_K); finish(v, blk, xb, isum, acc)
// (Q4_KFinish, Q6_KFinish) adds the block's floats to acc[j].
template <int RN, typename V, typename Block, typename Sums, typename Finish>
inline void TileX8(V v, const Block* g, int64_t nb, const uint8_t* xbase, size_t xs, typename V::F* out, Sums sums,
                   Finish finish) {
  using XBlock = typename Finish::XBlock;
  typename V::F acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = V::FZero();
  for (int64_t b = 0; b < nb; ++b) {
    const Block& blk = g[b];
    const XBlock* xb[RN];
    typename V::I isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const XBlock*>(xbase + j * xs) + b;
      isum[j] = V::Zero();
    }
    sums(v, blk, xb, isum);
    finish(v, blk, xb, isum, acc);
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// Q4_Kx8 and Q5_Kx8 (the same d, dmin and m): d * isum - dmin * (sum over
// the 8 sub-blocks of min * the token's bsums of the sub-block), per row lane.
struct Q4_KFinish {
  using XBlock = BlockQ8_K;
  template <typename V, int RN, typename Block>
  void operator()(V v, const Block& blk, const BlockQ8_K* const (&xb)[RN], const typename V::I (&isum)[RN],
                  typename V::F (&acc)[RN]) const {
    typename V::I mins[4];  // lane r: (m[p][r][0], m[p][r][1]) as int16
    for (int p = 0; p < 4; ++p) mins[p] = v.U8ToI16(blk.m[p][0]);
    const typename V::F wd = v.Halves(blk.d), wm = v.Halves(blk.dmin);
    for (int j = 0; j < RN; ++j) {
      // The token's 8 sub-block sums (int16 pairs of its bsums, wrapping as
      // the int16 lanes do); pair p = sub-blocks 2p and 2p + 1 in word p.
      const auto* bs = reinterpret_cast<const __m128i*>(xb[j]->bsums);
      alignas(16) int32_t pairs[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(pairs), _mm_hadd_epi16(_mm_loadu_si128(bs), _mm_loadu_si128(bs + 1)));
      typename V::I msum = V::Zero();
      for (int p = 0; p < 4; ++p) msum = V::Add(msum, V::Madd16(mins[p], V::Set1(pairs[p])));
      const typename V::F xd = V::Set1Ps(xb[j]->d);
      acc[j] = V::Fmadd(V::Mul(wd, xd), V::Cvt(isum[j]), acc[j]);
      acc[j] = V::Fnmadd(V::Mul(wm, xd), V::Cvt(msum), acc[j]);
    }
  }
};

// Q6_Kx8: d * (isum - 32 * sum over the 16 sub-blocks of scale * the token's
// bsum of the sub-block), per row lane: the levels' -32 offset.
struct Q6_KFinish {
  using XBlock = BlockQ8_K;
  template <typename V, int RN>
  void operator()(V v, const BlockQ6_Kx8& blk, const BlockQ8_K* const (&xb)[RN], const typename V::I (&isum)[RN],
                  typename V::F (&acc)[RN]) const {
    typename V::I scp[8];  // lane r: (sc[2i][r], sc[2i + 1][r]) as int16
    for (int i = 0; i < 8; ++i) scp[i] = v.S8PairsToI16(blk.sc[2 * i], blk.sc[2 * i + 1]);
    const typename V::F wd = v.Halves(blk.d);
    for (int j = 0; j < RN; ++j) {
      const int16_t* bs = xb[j]->bsums;
      typename V::I msum = V::Zero();
      for (int i = 0; i < 8; ++i) {
        int32_t pair;  // bs[2i] | bs[2i + 1] << 16: the two int16 as one word
        std::memcpy(&pair, bs + 2 * i, sizeof(pair));
        msum = V::Add(msum, V::Madd16(scp[i], V::Set1(pair)));
      }
      const typename V::I total = V::Sub(isum[j], V::Slli32(msum, 5));
      acc[j] = V::Fmadd(V::Mul(wd, V::Set1Ps(xb[j]->d)), V::Cvt(total), acc[j]);
    }
  }
};

}  // namespace
}  // namespace pg

// Defines the GemmTileFn NAME: GemmGroupsOf8<BLOCK, V8, V16> over BLOCKs of
// COLS columns per row, each token tile run by TILE<RN>(v, group, nb, x, xs,
// out, EXTRA...).
#define PG_GEMM_GROUPS_OF8(NAME, BLOCK, COLS, V8, V16, TILE, ...)                                             \
  void NAME(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, \
            float* y, int64_t ldy) {                                                                          \
    GemmGroupsOf8<BLOCK, V8, V16>(w, COLS, xa, xs, t0, t1, r0, r1, y, ldy, [](auto v, auto rn, auto... a) {   \
      TILE<decltype(rn)::value>(v, a... __VA_OPT__(, ) __VA_ARGS__);                                          \
    });                                                                                                       \
  }
