// AVX2 GEMM tiles and activation quantizers.
//
// Q8_0 / Q4_0: register tiles of RM weight rows x RN tokens. Per 32-element
// block, each (row, token) pair costs sign + maddubs + madd + cvt + fma: the
// weight block is loaded (and for Q4_0 unpacked) once per RN tokens and the
// activation block once per RM rows.
//
// Q4_K / Q5_K / Q6_K: each weight row is first unpacked, one chunk of
// super-blocks at a time, into an L1-resident form shared by the three types
// (unsigned levels q in [0, 63] plus per-16 integer scales and offsets):
//   row . x = sum_sb xd * (d * sum_16 sc16 * (q . x) - dmo * sum_16 mo16 * bsum)
// and then meets every token of the tile through the same integer kernel.
#include <algorithm>
#include <cstring>

#include "backend/cpu/fp16.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {

void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
    __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
    __m256 amax = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign_bit, v0), _mm256_andnot_ps(sign_bit, v1)),
                                _mm256_max_ps(_mm256_andnot_ps(sign_bit, v2), _mm256_andnot_ps(sign_bit, v3)));
    const float d = HMax(amax) / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[b].d = static_cast<uint16_t>(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    const __m256 m = _mm256_set1_ps(id);
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, m), kRound));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, m), kRound));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, m), kRound));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, m), kRound));
    i0 = _mm256_packs_epi32(i0, i1);
    i2 = _mm256_packs_epi32(i2, i3);
    i0 = _mm256_packs_epi16(i0, i2);
    i0 = _mm256_permutevar8x32_epi32(i0, perm);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[b].qs), i0);
  }
}

void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n) { scalar::QuantizeQ8_K(src, dst, n); }

namespace {

inline float H2F(uint16_t h) { return _cvtsh_ss(h); }

// 32 signed weight levels of a block.
inline __m256i LoadWeightsQ8_0(const BlockQ8_0* b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs));
}
inline __m256i LoadWeightsQ4_0(const BlockQ4_0* b) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

// Signed int8 x int8 dot of 32 lanes -> 8 int32 partial sums, as floats.
inline __m256 DotI8(__m256i w_abs, __m256i w, __m256i x) {
  const __m256i p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(x, w));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

template <typename WBlock, int RM, int RN>
void TileQ8(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb,
            float* y, int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  // maddubs needs one unsigned operand: |a| against sign(b, a). Take the
  // absolute value on the side with fewer vectors per block (x for decode).
  constexpr bool kAbsX = RN < RM;
  for (int64_t b = 0; b < nb; ++b) {
    __m256 xd[RN];
    __m256i xv[RN], xabs[RN];
    for (int j = 0; j < RN; ++j) {
      const BlockQ8_0* xb = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      xd[j] = _mm256_set1_ps(H2F(xb->d));
      xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs));
      if constexpr (kAbsX) xabs[j] = _mm256_sign_epi8(xv[j], xv[j]);
    }
    for (int i = 0; i < RM; ++i) {
      const WBlock* wb = reinterpret_cast<const WBlock*>(wbase + i * wstride) + b;
      __m256i w;
      if constexpr (sizeof(WBlock) == sizeof(BlockQ8_0)) {
        w = LoadWeightsQ8_0(reinterpret_cast<const BlockQ8_0*>(wb));
      } else {
        w = LoadWeightsQ4_0(reinterpret_cast<const BlockQ4_0*>(wb));
      }
      const __m256 wd = _mm256_set1_ps(H2F(wb->d));
      __m256i w_abs;
      if constexpr (!kAbsX) w_abs = _mm256_sign_epi8(w, w);
      for (int j = 0; j < RN; ++j) {
        __m256i p16;
        if constexpr (kAbsX) {
          p16 = _mm256_maddubs_epi16(xabs[j], _mm256_sign_epi8(w, xv[j]));
        } else {
          p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(xv[j], w));
        }
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
        acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd[j]), dot, acc[i][j]);
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

template <typename WBlock, int RM, int RN>
void TileQ8Any(int rn, const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs,
               int64_t nb, float* y, int64_t ldy) {
  if constexpr (RN > 0) {
    if (rn == RN) return TileQ8<WBlock, RM, RN>(wbase, wstride, xbase, xs, nb, y, ldy);
    return TileQ8Any<WBlock, RM, RN - 1>(rn, wbase, wstride, xbase, xs, nb, y, ldy);
  }
}

template <typename WBlock, int RM, int RN>
void TileQ8Rows(int rm, int rn, const uint8_t* wbase, size_t wstride, const uint8_t* xbase,
                size_t xs, int64_t nb, float* y, int64_t ldy) {
  if constexpr (RM > 0) {
    if (rm == RM) return TileQ8Any<WBlock, RM, RN>(rn, wbase, wstride, xbase, xs, nb, y, ldy);
    return TileQ8Rows<WBlock, RM - 1, RN>(rm, rn, wbase, wstride, xbase, xs, nb, y, ldy);
  }
}

// Register tile of 4 rows x 3 tokens: 12 accumulators of the 16 ymm registers
// (4x2, 3x3 and 2x4 measured no faster).
template <typename WBlock>
void GemmQ8Tiled(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1,
                 int64_t r0, int64_t r1, float* y, int64_t ldy) {
  constexpr int RM = 4, RN = 3;
  const int64_t nb = w.cols / kQK;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t r = r0; r < r1; r += RM) {
    const int rm = static_cast<int>(std::min<int64_t>(RM, r1 - r));
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      TileQ8Rows<WBlock, RM, RN>(rm, rn, wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs,
                                 nb, y + t * ldy + r, ldy);
    }
  }
}

// ---- float weights: 4 rows x 3 tokens of f32 FMAs, 8 columns at a time ----
//
// A tile reads row i's 8 columns [c, c + 8) at
//   wbase + i * wstride + (c / 32) * cstride + (c % 32) * elem_size:
// row-major matrices have wstride = row_bytes and cstride = 32 elements;
// Half4 matrices (repack.h) wstride = 32 elements and cstride = 4 * 32
// elements, and no column tail. Either way each row's sum is the same chain
// of FMAs, so both layouts give the same bits.

inline __m256 LoadW(const float* p) { return _mm256_loadu_ps(p); }
struct F16Tag {};
struct BF16Tag {};
template <typename WT>
constexpr size_t kElemSize = std::is_same_v<WT, float> ? 4 : 2;

template <typename WT, int RM, int RN>
void TileFloat(const uint8_t* wbase, size_t wstride, size_t cstride, const float* x, int64_t ldx,
               int64_t cols, float* y, int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8) {
    __m256 xv[RN];
    for (int j = 0; j < RN; ++j) xv[j] = _mm256_loadu_ps(x + j * ldx + c);
    const uint8_t* chunk = wbase + (c / kHalf4Cols) * cstride + (c % kHalf4Cols) * kElemSize<WT>;
    for (int i = 0; i < RM; ++i) {
      __m256 wv;
      if constexpr (std::is_same_v<WT, float>) {
        wv = LoadW(reinterpret_cast<const float*>(chunk + i * wstride));
      } else if constexpr (std::is_same_v<WT, F16Tag>) {
        wv = LoadF16(reinterpret_cast<const uint16_t*>(chunk + i * wstride));
      } else {
        wv = LoadBF16(reinterpret_cast<const uint16_t*>(chunk + i * wstride));
      }
      for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_fmadd_ps(wv, xv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < RM; ++i) {
    for (int j = 0; j < RN; ++j) {
      float s = HSum(acc[i][j]);
      for (int64_t k = c; k < cols; ++k) {  // row-major only
        float wk;
        if constexpr (std::is_same_v<WT, float>) {
          wk = reinterpret_cast<const float*>(wbase + i * wstride)[k];
        } else if constexpr (std::is_same_v<WT, F16Tag>) {
          wk = pg::F16ToF32(reinterpret_cast<const uint16_t*>(wbase + i * wstride)[k]);
        } else {
          wk = pg::BF16ToF32(reinterpret_cast<const uint16_t*>(wbase + i * wstride)[k]);
        }
        s += wk * x[j * ldx + k];
      }
      y[j * ldy + i] = s;
    }
  }
}

template <typename WT, int RM>
void TileFloatRows(int rn, const uint8_t* wbase, size_t wstride, size_t cstride, const float* x,
                   int64_t ldx, int64_t cols, float* y, int64_t ldy) {
  switch (rn) {
    case 1: TileFloat<WT, RM, 1>(wbase, wstride, cstride, x, ldx, cols, y, ldy); break;
    case 2: TileFloat<WT, RM, 2>(wbase, wstride, cstride, x, ldx, cols, y, ldy); break;
    case 3: TileFloat<WT, RM, 3>(wbase, wstride, cstride, x, ldx, cols, y, ldy); break;
  }
}

template <typename WT, int RM, int RN, typename RowBase>
void GemmFloatTiledRows(const RowBase& row_base, size_t wstride, size_t cstride, const float* x, int64_t ldx,
                        int64_t cols, int64_t t0, int64_t t1, int64_t r0, int64_t r1, float* y, int64_t ldy) {
  for (int64_t r = r0; r < r1; r += RM) {
    const int rm = static_cast<int>(std::min<int64_t>(RM, r1 - r));
    const uint8_t* wp = row_base(r);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      const float* xp = x + t * ldx;
      float* yp = y + t * ldy + r;
      switch (rm) {
        case 4: TileFloatRows<WT, 4>(rn, wp, wstride, cstride, xp, ldx, cols, yp, ldy); break;
        case 3: TileFloatRows<WT, 3>(rn, wp, wstride, cstride, xp, ldx, cols, yp, ldy); break;
        case 2: TileFloatRows<WT, 2>(rn, wp, wstride, cstride, xp, ldx, cols, yp, ldy); break;
        case 1: TileFloatRows<WT, 1>(rn, wp, wstride, cstride, xp, ldx, cols, yp, ldy); break;
      }
    }
  }
}

template <typename WT>
void GemmFloatTiled(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1,
                    int64_t r0, int64_t r1, float* y, int64_t ldy) {
  constexpr int RM = 4, RN = 3;
  constexpr size_t kElem = kElemSize<WT>;
  const bool half4 = w.layout == WeightLayout::kHalf4;
  const size_t wstride = half4 ? kHalf4Cols * kElem : w.row_bytes;
  const size_t cstride = half4 ? kHalf4Rows * kHalf4Cols * kElem : kHalf4Cols * kElem;
  // Row r's first chunk.
  auto row_base = [&](int64_t r) {
    const auto* base = static_cast<const uint8_t*>(w.data);
    if (!half4) return base + r * w.row_bytes;
    return base + (r / kHalf4Rows) * (kHalf4Rows * w.cols * kElem) + (r % kHalf4Rows) * kHalf4Cols * kElem;
  };
  const int64_t ldx = static_cast<int64_t>(xs / sizeof(float));
  const float* x = static_cast<const float*>(xa);
  if (!half4) {
    GemmFloatTiledRows<WT, RM, RN>(row_base, wstride, cstride, x, ldx, w.cols, t0, t1, r0, r1, y, ldy);
    return;
  }
  // Half4: one group at a time, so that no tile straddles two groups; a tile
  // is then one group (RM = 4 = kHalf4Rows), read as one contiguous range.
  static_assert(RM == kHalf4Rows);
  for (int64_t g = r0 / kHalf4Rows * kHalf4Rows; g < r1; g += kHalf4Rows) {
    const int64_t lo = std::max(g, r0), hi = std::min(g + kHalf4Rows, r1);
    GemmFloatTiledRows<WT, RM, RN>(row_base, wstride, cstride, x, ldx, w.cols, t0, t1, lo, hi, y, ldy);
  }
}

// ---- K-quants ----

// One unpacked super-block (see the file comment).
struct alignas(32) UnpackedK {
  uint8_t q[kQKK];        // levels, q[i] for element i
  int16_t scv[8][16];     // per 32-element chunk: 8 x scale(first 16), 8 x scale(second 16)
  int16_t mo[16];         // per-16 offset multipliers (pairs with bsums)
  float d;                // scale of sc
  float dmo;              // scale of the offset term
};

void UnpackQ4K(const BlockQ4_K& b, UnpackedK& u) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int c = 0; c < 4; ++c) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c), _mm256_and_si256(raw, m4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c + 32),
                       _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4));
  }
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, b.scales, &sc, &m);
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[j]), _mm256_set1_epi16(sc));
    u.mo[2 * j] = u.mo[2 * j + 1] = m;
  }
  u.d = H2F(b.d);
  u.dmo = H2F(b.dmin);
}

void UnpackQ5K(const BlockQ5_K& b, UnpackedK& u) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (int c = 0; c < 4; ++c) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
    const __m256i bit_lo = _mm256_set1_epi8(static_cast<char>(1 << (2 * c)));
    const __m256i bit_hi = _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1)));
    const __m256i h_lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_lo), bit_lo), sixteen);
    const __m256i h_hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_hi), bit_hi), sixteen);
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c),
                       _mm256_or_si256(_mm256_and_si256(raw, m4), h_lo));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c + 32),
                       _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), h_hi));
  }
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, b.scales, &sc, &m);
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[j]), _mm256_set1_epi16(sc));
    u.mo[2 * j] = u.mo[2 * j + 1] = m;
  }
  u.d = H2F(b.d);
  u.dmo = H2F(b.dmin);
}

void UnpackQ6K(const BlockQ6_K& b, UnpackedK& u) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int half = 0; half < 2; ++half) {
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * half));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * half + 32));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * half));
    const __m256i q1 = _mm256_or_si256(_mm256_and_si256(ql0, m4),
                                       _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4));
    const __m256i q2 = _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                       _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0C)), 2));
    const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                       _mm256_and_si256(qh, _mm256_set1_epi8(0x30)));
    const __m256i q4 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                       _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(0xC0))), 2));
    uint8_t* o = u.q + 128 * half;
    _mm256_store_si256(reinterpret_cast<__m256i*>(o), q1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 32), q2);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 64), q3);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 96), q4);
  }
  for (int c = 0; c < 8; ++c) {
    const int16_t s0 = b.scales[2 * c], s1 = b.scales[2 * c + 1];
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[c]),
                       _mm256_set_m128i(_mm_set1_epi16(s1), _mm_set1_epi16(s0)));
  }
  for (int j = 0; j < 16; ++j) u.mo[j] = static_cast<int16_t>(32 * b.scales[j]);
  u.d = H2F(b.d);
  u.dmo = u.d;
}

// acc[j] += dot(unpacked super-block, token j's Q8_K block), RN tokens.
template <int RN>
inline void DotUnpacked(const UnpackedK& u, const BlockQ8_K* const* xb, __m256* acc) {
  __m256i sumi[RN];
  for (int j = 0; j < RN; ++j) sumi[j] = _mm256_setzero_si256();
  for (int c = 0; c < 8; ++c) {
    const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.q + 32 * c));
    const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.scv[c]));
    for (int j = 0; j < RN; ++j) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[j]->qs + 32 * c));
      sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), sc));
    }
  }
  const __m256i mo = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.mo));
  for (int j = 0; j < RN; ++j) {
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[j]->bsums));
    const __m256 summ = _mm256_cvtepi32_ps(_mm256_madd_epi16(bs, mo));
    const float xd = xb[j]->d;
    acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(u.d * xd), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    acc[j] = _mm256_fnmadd_ps(_mm256_set1_ps(u.dmo * xd), summ, acc[j]);
  }
}

template <typename Block, void (*Unpack)(const Block&, UnpackedK&)>
void GemmKQuant(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1,
                int64_t r0, int64_t r1, float* y, int64_t ldy) {
  constexpr int kChunk = 16;  // super-blocks unpacked at a time (~9 KiB)
  constexpr int RN = 4;
  UnpackedK u[kChunk];
  const int64_t nb = w.cols / kQKK;
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t r = r0; r < r1; ++r) {
    const Block* wr = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(w.data) + r * w.row_bytes);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      __m256 acc[RN] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
      for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
        const int nc = static_cast<int>(std::min<int64_t>(kChunk, nb - c0));
        // Unpack once per row chunk; with many tokens the chunk is reused from L1.
        if (t == t0 || nb > kChunk) {
          for (int c = 0; c < nc; ++c) Unpack(wr[c0 + c], u[c]);
        }
        for (int c = 0; c < nc; ++c) {
          const BlockQ8_K* xb[RN];
          for (int j = 0; j < rn; ++j) {
            xb[j] = reinterpret_cast<const BlockQ8_K*>(xbase + (t + j) * xs) + c0 + c;
          }
          switch (rn) {
            case 4: DotUnpacked<4>(u[c], xb, acc); break;
            case 3: DotUnpacked<3>(u[c], xb, acc); break;
            case 2: DotUnpacked<2>(u[c], xb, acc); break;
            case 1: DotUnpacked<1>(u[c], xb, acc); break;
          }
        }
      }
      for (int j = 0; j < rn; ++j) y[(t + j) * ldy + r] = HSum(acc[j]);
    }
  }
}

}  // namespace

void GemmF32(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
             int64_t r1, float* y, int64_t ldy) {
  GemmFloatTiled<float>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmF16(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
             int64_t r1, float* y, int64_t ldy) {
  GemmFloatTiled<F16Tag>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmBF16(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmFloatTiled<BF16Tag>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmF16Half4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                  int64_t r1, float* y, int64_t ldy) {
  GemmFloatTiled<F16Tag>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmBF16Half4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
                   int64_t r1, float* y, int64_t ldy) {
  GemmFloatTiled<BF16Tag>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmQ8_0(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmQ8Tiled<BlockQ8_0>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmQ4_0(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmQ8Tiled<BlockQ4_0>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmQ4_K(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmKQuant<BlockQ4_K, UnpackQ4K>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmQ5_K(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmKQuant<BlockQ5_K, UnpackQ5K>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}
void GemmQ6_K(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0,
              int64_t r1, float* y, int64_t ldy) {
  GemmKQuant<BlockQ6_K, UnpackQ6K>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

}  // namespace pg::avx2
