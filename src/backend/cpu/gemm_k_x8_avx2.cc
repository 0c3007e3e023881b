// AVX2 GEMM over the repacked K-quants Q4_Kx8 and Q6_Kx8 (repack.h): tiles
// of one 8-row group x up to 4 tokens, one row per 32-bit lane.
//
// Q4_Kx8: per 32-byte load of weights (4 columns of sub-blocks 2p and 2p + 1
// for the 8 rows) the low and high nibbles meet the token's 4 matching quants
// of each sub-block, broadcast: maddubs, then madd against the rows'
// sub-block scales (each row's scale in both int16 halves of its lane) adds
// sc * (4 products) to the row's int32 sum. The mins pair with the token's
// bsums through one madd per sub-block pair. After a super-block each lane
// holds its row's exact isum and msum: two cvt and two FMAs.
//
// Q6_Kx8: the same with 6-bit levels (ql nibble | 2 bits of qh << 4) and
// signed int8 scales per 16; the -32 offset is 32 * sum_j sc_j bsum_j, taken
// off the int32 sum before its one FMA.
//
// Same operations as scalar::GemmQ4_Kx8 / GemmQ6_Kx8, so bit-identical.
#include <algorithm>
#include <cstring>

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

inline __m256i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

template <int RN>
void TileQ4_Kx8(const BlockQ4_Kx8* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ4_Kx8& blk = g[b];
    const BlockQ8_K* xb[RN];
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_K*>(xbase + j * xs) + b;
      isum[j] = _mm256_setzero_si256();
    }
    for (int p = 0; p < 4; ++p) {
      const __m256i s_lo = RowScales16(blk.sc[2 * p]), s_hi = RowScales16(blk.sc[2 * p + 1]);
      for (int k = 0; k < 8; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 256 * p + 32 * k));
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          const __m256i a = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, Broadcast4(xq)), s_lo);
          const __m256i c = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, Broadcast4(xq + 32)), s_hi);
          isum[j] = _mm256_add_epi32(isum[j], _mm256_add_epi32(a, c));
        }
      }
    }
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
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// Runs Tiles::Run<RN> over every group and token tile of [r0, r1) x [t0, t1).
// Tasks start on a group boundary (MatMul's row blocks are multiples of 8);
// a range that does not is computed from its group's start all the same.
template <typename Tiles>
void GemmGroupsOf8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                   int64_t r1, float* y, int64_t ldy) {
  using Block = typename Tiles::Block;
  constexpr int RN = 4;
  const int64_t nb = w.cols / kQKK;
  const auto* groups = static_cast<const Block*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t g0 = r0 / kQ4_Kx8Rows * kQ4_Kx8Rows; g0 < r1; g0 += kQ4_Kx8Rows) {
    const Block* g = groups + (g0 / kQ4_Kx8Rows) * nb;
    const int64_t lo = std::max(g0, r0), hi = std::min(g0 + kQ4_Kx8Rows, r1);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      __m256 out[RN];
      const uint8_t* xt = xbase + t * xs;
      switch (rn) {
        case 4: Tiles::template Run<4>(g, nb, xt, xs, out); break;
        case 3: Tiles::template Run<3>(g, nb, xt, xs, out); break;
        case 2: Tiles::template Run<2>(g, nb, xt, xs, out); break;
        default: Tiles::template Run<1>(g, nb, xt, xs, out); break;
      }
      for (int j = 0; j < rn; ++j) {
        float* yt = y + (t + j) * ldy;
        if (lo == g0 && hi == g0 + kQ4_Kx8Rows) {
          _mm256_storeu_ps(yt + g0, out[j]);
        } else {
          alignas(32) float v[kQ4_Kx8Rows];
          _mm256_store_ps(v, out[j]);
          for (int64_t r = lo; r < hi; ++r) yt[r] = v[r - g0];
        }
      }
    }
  }
}

// int8 row scales -> each, sign-extended, in both int16 halves of its lane.
inline __m256i RowScales16Signed(const int8_t* sc8) {
  const __m256i s = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc8)));
  return _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s, 16));
}

template <int RN>
void TileQ6_Kx8(const BlockQ6_Kx8* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_Kx8& blk = g[b];
    const BlockQ8_K* xb[RN];
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_K*>(xbase + j * xs) + b;
      isum[j] = _mm256_setzero_si256();
    }
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 8; ++k) {
        const __m256i vh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 256 * h + 32 * k));
        for (int c = 0; c < 2; ++c) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql + 512 * h + 256 * c + 32 * k));
          const __m256i qa = _mm256_or_si256(
              _mm256_and_si256(v, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 2 * c), m3), 4));
          const __m256i qb =
              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                              _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 4 + 2 * c), m3), 4));
          const int ea = 128 * h + 32 * c + 4 * k, eb = ea + 64;
          const __m256i sa = RowScales16Signed(blk.sc[ea / 16]), sb = RowScales16Signed(blk.sc[eb / 16]);
          for (int j = 0; j < RN; ++j) {
            const __m256i pa = _mm256_madd_epi16(_mm256_maddubs_epi16(qa, Broadcast4(xb[j]->qs + ea)), sa);
            const __m256i pb = _mm256_madd_epi16(_mm256_maddubs_epi16(qb, Broadcast4(xb[j]->qs + eb)), sb);
            isum[j] = _mm256_add_epi32(isum[j], _mm256_add_epi32(pa, pb));
          }
        }
      }
    }
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
        const uint32_t pair = static_cast<uint16_t>(bs[2 * i]) | (static_cast<uint32_t>(static_cast<uint16_t>(bs[2 * i + 1])) << 16);
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(scp[i], _mm256_set1_epi32(static_cast<int32_t>(pair))));
      }
      const __m256i total = _mm256_sub_epi32(isum[j], _mm256_slli_epi32(msum, 5));
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_set1_ps(xb[j]->d)), _mm256_cvtepi32_ps(total), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

struct Q4_Kx8Tiles {
  using Block = BlockQ4_Kx8;
  template <int RN>
  static void Run(const Block* g, int64_t nb, const uint8_t* x, size_t xs, __m256* out) {
    TileQ4_Kx8<RN>(g, nb, x, xs, out);
  }
};

struct Q6_Kx8Tiles {
  using Block = BlockQ6_Kx8;
  template <int RN>
  static void Run(const Block* g, int64_t nb, const uint8_t* x, size_t xs, __m256* out) {
    TileQ6_Kx8<RN>(g, nb, x, xs, out);
  }
};

}  // namespace

void GemmQ4_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                int64_t r1, float* y, int64_t ldy) {
  GemmGroupsOf8<Q4_Kx8Tiles>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

void GemmQ6_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                int64_t r1, float* y, int64_t ldy) {
  GemmGroupsOf8<Q6_Kx8Tiles>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

}  // namespace pg::avx2
