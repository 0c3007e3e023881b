// AVX-512 VNNI GEMM over the 8-row repacked layouts Q8_0x8, Q5_0x8, Q4_Kx8
// and Q6_Kx8 (repack.h): tiles of one 8-row group x up to 4 tokens, one row per
// 32-bit lane of a 256-bit vector (AVX-512VL), as the AVX2 kernels. Where
// AVX2 needs broadcast + maddubs + madd + add per 32-byte load and token,
// VPDPBUSD (u8 x s8, four products added into each int32 lane) does it in one
// instruction, with the token's 4 quants as an embedded broadcast:
//
// - Q4_Kx8 / Q6_Kx8: the levels are unsigned (nibbles; 6-bit levels before
//   the -32 offset), so they are VPDPBUSD's u8 operand as they are. The
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
// scalar::GemmQ8_0x8 / GemmQ5_0x8 / GemmQ4_Kx8 / GemmQ6_Kx8.
// GCC 12's AVX-512 intrinsics raise false -W(maybe-)uninitialized warnings
// when inlined (see gemm_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"

namespace pg::avx512 {
namespace {

inline __m256i Bcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i Load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

template <int RN>
void TileQ8_0x8(const BlockQ8_0x8* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out) {
  const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ8_0x8& blk = g[b];
    const BlockQ8_0* xb[RN];
    alignas(32) uint8_t xu[RN][kQK];  // the token's quants + 128
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      _mm256_store_si256(reinterpret_cast<__m256i*>(xu[j]), _mm256_xor_si256(Load256(xb[j]->qs), k128));
      isum[j] = _mm256_setzero_si256();
    }
    __m256i wsum = _mm256_setzero_si256();  // 128 * sum w, per row
    for (int k = 0; k < kQK / 4; ++k) {
      const __m256i w = Load256(blk.qs + kQK * k);
      wsum = _mm256_dpbusd_epi32(wsum, k128, w);
      for (int j = 0; j < RN; ++j) isum[j] = _mm256_dpbusd_epi32(isum[j], Bcast4(xu[j] + 4 * k), w);
    }
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum[j], wsum)), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// Q5_0x8: as Q8_0x8, with the signed levels rebuilt per load from the
// nibbles: the low (h = 0) and high (h = 1) nibbles, minus 16 in the bytes
// whose fifth bit is 0 (one masked subtract each).
template <int RN>
void TileQ5_0x8(const BlockQ5_0x8* g, int64_t nb, const uint8_t* xbase, size_t xs, __m256* out) {
  const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80)), m4 = _mm256_set1_epi8(0x0F);
  const __m256i k16 = _mm256_set1_epi8(16);
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ5_0x8& blk = g[b];
    const BlockQ8_0* xb[RN];
    alignas(32) uint8_t xu[RN][kQK];  // the token's quants + 128
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      _mm256_store_si256(reinterpret_cast<__m256i*>(xu[j]), _mm256_xor_si256(Load256(xb[j]->qs), k128));
      isum[j] = _mm256_setzero_si256();
    }
    __m256i wsum = _mm256_setzero_si256();  // 128 * sum w, per row
    for (int k = 0; k < kQK / 8; ++k) {
      const __m256i v = Load256(blk.qs + 32 * k);
      __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      lo = _mm256_mask_sub_epi8(lo, _cvtu32_mask32(blk.low16[k][0]), lo, k16);
      hi = _mm256_mask_sub_epi8(hi, _cvtu32_mask32(blk.low16[k][1]), hi, k16);
      wsum = _mm256_dpbusd_epi32(wsum, k128, _mm256_add_epi8(lo, hi));
      for (int j = 0; j < RN; ++j) {
        isum[j] = _mm256_dpbusd_epi32(isum[j], Bcast4(xu[j] + 4 * k), lo);
        isum[j] = _mm256_dpbusd_epi32(isum[j], Bcast4(xu[j] + 16 + 4 * k), hi);
      }
    }
    const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    for (int j = 0; j < RN; ++j) {
      const __m256 d = _mm256_mul_ps(wd, _mm256_set1_ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum[j], wsum)), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
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
      __m256i s_lo[RN], s_hi[RN];  // sub-blocks 2p and 2p + 1
      for (int j = 0; j < RN; ++j) s_lo[j] = s_hi[j] = _mm256_setzero_si256();
      for (int k = 0; k < 8; ++k) {
        const __m256i v = Load256(blk.qs + 256 * p + 32 * k);
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          s_lo[j] = _mm256_dpbusd_epi32(s_lo[j], lo, Bcast4(xq));
          s_hi[j] = _mm256_dpbusd_epi32(s_hi[j], hi, Bcast4(xq + 32));
        }
      }
      const __m256i sc_lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * p])));
      const __m256i sc_hi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.sc[2 * p + 1])));
      for (int j = 0; j < RN; ++j) {
        isum[j] = _mm256_add_epi32(
            isum[j], _mm256_add_epi32(_mm256_mullo_epi32(s_lo[j], sc_lo), _mm256_mullo_epi32(s_hi[j], sc_hi)));
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
      for (int c = 0; c < 2; ++c) {
        for (int half = 0; half < 2; ++half) {  // 4 loads = one 16-column sub-block of each of a and b
          __m256i pa[RN], pb[RN];
          for (int j = 0; j < RN; ++j) pa[j] = pb[j] = _mm256_setzero_si256();
          for (int k = 4 * half; k < 4 * half + 4; ++k) {
            const __m256i vh = Load256(blk.qh + 256 * h + 32 * k);
            const __m256i v = Load256(blk.ql + 512 * h + 256 * c + 32 * k);
            const __m256i qa = _mm256_or_si256(
                _mm256_and_si256(v, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 2 * c), m3), 4));
            const __m256i qb =
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(vh, 4 + 2 * c), m3), 4));
            const int ea = 128 * h + 32 * c + 4 * k;
            for (int j = 0; j < RN; ++j) {
              pa[j] = _mm256_dpbusd_epi32(pa[j], qa, Bcast4(xb[j]->qs + ea));
              pb[j] = _mm256_dpbusd_epi32(pb[j], qb, Bcast4(xb[j]->qs + ea + 64));
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
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// Runs Tile<RN> over every group and token tile of [r0, r1) x [t0, t1).
// Tasks start on a group boundary (MatMul's row blocks are multiples of 8);
// a range that does not is computed from its group's start all the same.
template <typename Block, void (*Tile1)(const Block*, int64_t, const uint8_t*, size_t, __m256*),
          void (*Tile2)(const Block*, int64_t, const uint8_t*, size_t, __m256*),
          void (*Tile3)(const Block*, int64_t, const uint8_t*, size_t, __m256*),
          void (*Tile4)(const Block*, int64_t, const uint8_t*, size_t, __m256*)>
void GemmGroupsOf8(const WeightMatrix& w, int64_t block_cols, const void* xa, size_t xs, int64_t t0, int64_t t1,
                   int64_t r0, int64_t r1, float* y, int64_t ldy) {
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
        case 4: Tile4(g, nb, xt, xs, out); break;
        case 3: Tile3(g, nb, xt, xs, out); break;
        case 2: Tile2(g, nb, xt, xs, out); break;
        default: Tile1(g, nb, xt, xs, out); break;
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

}  // namespace

void GemmQ8_0x8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmGroupsOf8<BlockQ8_0x8, TileQ8_0x8<1>, TileQ8_0x8<2>, TileQ8_0x8<3>, TileQ8_0x8<4>>(w, kQK, xa, xs, t0, t1, r0,
                                                                                        r1, y, ldy);
}

void GemmQ5_0x8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmGroupsOf8<BlockQ5_0x8, TileQ5_0x8<1>, TileQ5_0x8<2>, TileQ5_0x8<3>, TileQ5_0x8<4>>(w, kQK, xa, xs, t0, t1, r0,
                                                                                        r1, y, ldy);
}

void GemmQ4_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmGroupsOf8<BlockQ4_Kx8, TileQ4_Kx8<1>, TileQ4_Kx8<2>, TileQ4_Kx8<3>, TileQ4_Kx8<4>>(w, kQKK, xa, xs, t0, t1, r0,
                                                                                        r1, y, ldy);
}

void GemmQ6_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmGroupsOf8<BlockQ6_Kx8, TileQ6_Kx8<1>, TileQ6_Kx8<2>, TileQ6_Kx8<3>, TileQ6_Kx8<4>>(w, kQKK, xa, xs, t0, t1, r0,
                                                                                        r1, y, ldy);
}

}  // namespace pg::avx512
