// AVX2 GEMM tiles and activation quantizers for F32 / F16 / BF16 (and their
// Half4 layouts), Q8_0, Q4_0, Q4_K, Q5_K and Q6_K. The quantized tiles are the
// templates of gemm_tiles_avx2.h (the file comment there says how they work);
// the other weight types are in gemm_more_avx2.cc.
#include <algorithm>
#include <cstring>

#include "backend/cpu/fp16.h"
#include "backend/cpu/gemm_tiles_avx2.h"
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

// As scalar::QuantizeQ8_K, bit for bit: the value of largest magnitude is
// the first one that reaches the maximum (NaNs never do: VMAXPS returns its
// second operand, the running maximum, when the first is a NaN); the levels
// are the same float products rounded to nearest even, clamped at 127 and
// truncated to 8 bits (a NaN's integer indefinite becomes 0, as the scalar
// cast does); each bsum is the sum of 16 of those bytes.
void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n) {
  constexpr int kVecs = kQKK / 8;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i k127 = _mm256_set1_epi32(127);
  // The low byte of each 32-bit lane, per 128 bits, into bytes 0-3.
  const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                             0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i ones8 = _mm_set1_epi8(1);
  const __m128i ones16 = _mm_set1_epi16(1);
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    BlockQ8_K& o = dst[b];
    __m256 vmax = _mm256_setzero_ps();
    for (int i = 0; i < kVecs; ++i) vmax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * i)), vmax);
    const float amax = HMax(vmax);
    if (amax == 0) {
      std::memset(&o, 0, sizeof(o));
      continue;
    }
    float mx = 0;
    const __m256 am = _mm256_set1_ps(amax);
    for (int i = 0; i < kVecs; ++i) {
      const int hit =
          _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * i)), am, _CMP_EQ_OQ));
      if (hit != 0) {
        mx = x[8 * i + __builtin_ctz(static_cast<unsigned>(hit))];
        break;
      }
    }
    const float iscale = -128.0f / mx;
    const __m256 m = _mm256_set1_ps(iscale);
    for (int i = 0; i < kVecs; i += 2) {
      // 16 levels: two vectors of 8, each lane's low byte.
      __m128i q8[2];
      for (int h = 0; h < 2; ++h) {
        const __m256 prod = _mm256_mul_ps(m, _mm256_loadu_ps(x + 8 * (i + h)));
        const __m256i q = _mm256_min_epi32(_mm256_cvtps_epi32(prod), k127);  // MXCSR: nearest even
        const __m256i t = _mm256_shuffle_epi8(q, low_bytes);
        q8[h] = _mm_unpacklo_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
      }
      const __m128i levels = _mm_unpacklo_epi64(q8[0], q8[1]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o.qs + 8 * i), levels);
      __m128i s = _mm_madd_epi16(_mm_maddubs_epi16(ones8, levels), ones16);  // 4 sums of 4 levels
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
      o.bsums[i / 2] = static_cast<int16_t>(_mm_cvtsi128_si32(s));
    }
    o.d = 1.0f / iscale;
  }
}

namespace {

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
void TileFloat(const uint8_t* wbase, size_t wstride, size_t cstride, const float* x, int64_t ldx, int64_t cols,
               float* y, int64_t ldy) {
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

template <typename WT, int RM, int RN, typename RowBase>
void GemmFloatTiledRows(const RowBase& row_base, size_t wstride, size_t cstride, const float* x, int64_t ldx,
                        int64_t cols, int64_t t0, int64_t t1, int64_t r0, int64_t r1, float* y, int64_t ldy) {
  ForEachTile<RM, RN>(r0, r1, t0, t1, [&]<int M, int N>(int64_t r, int64_t t) {
    TileFloat<WT, M, N>(row_base(r), wstride, cstride, x + t * ldx, ldx, cols, y + t * ldy + r, ldy);
  });
}

template <typename WT>
void GemmFloatTiled(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                    float* y, int64_t ldy) {
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

// ---- K-quants: unpackers into GemmKQuant's form (gemm_tiles_avx2.h) ----

// Q4_K / Q5_K: the 8 sub-blocks' 6-bit scales (per 32-element chunk) and
// mins (per 16, pairing with bsums), with d and dmin.
template <typename Block>
inline void UnpackScalesMinsK4(const Block& b, UnpackedK& u) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, b.scales, &sc, &m);
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[j]), _mm256_set1_epi16(sc));
    u.mo[2 * j] = u.mo[2 * j + 1] = m;
  }
  u.d = H2F(b.d);
  u.dmo = H2F(b.dmin);
}

void UnpackQ4K(const BlockQ4_K& b, UnpackedK& u) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int c = 0; c < 4; ++c) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c), _mm256_and_si256(raw, m4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c + 32), _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4));
  }
  UnpackScalesMinsK4(b, u);
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
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c), _mm256_or_si256(_mm256_and_si256(raw, m4), h_lo));
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.q + 64 * c + 32),
                       _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), h_hi));
  }
  UnpackScalesMinsK4(b, u);
}

void UnpackQ6K(const BlockQ6_K& b, UnpackedK& u) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int half = 0; half < 2; ++half) {
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * half));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * half + 32));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * half));
    const __m256i q1 =
        _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4));
    const __m256i q2 =
        _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0C)), 2));
    const __m256i q3 =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, _mm256_set1_epi8(0x30)));
    const __m256i q4 =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                        _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(0xC0))), 2));
    uint8_t* o = u.q + 128 * half;
    _mm256_store_si256(reinterpret_cast<__m256i*>(o), q1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 32), q2);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 64), q3);
    _mm256_store_si256(reinterpret_cast<__m256i*>(o + 96), q4);
  }
  for (int c = 0; c < 8; ++c) {
    const int16_t s0 = b.scales[2 * c], s1 = b.scales[2 * c + 1];
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[c]), _mm256_set_m128i(_mm_set1_epi16(s1), _mm_set1_epi16(s0)));
  }
  for (int j = 0; j < 16; ++j) u.mo[j] = static_cast<int16_t>(32 * b.scales[j]);
  u.d = H2F(b.d);
  u.dmo = u.d;
}

}  // namespace

PG_GEMM_AS(GemmF32, GemmFloatTiled<float>)
PG_GEMM_AS(GemmF16, GemmFloatTiled<F16Tag>)
PG_GEMM_AS(GemmBF16, GemmFloatTiled<BF16Tag>)
PG_GEMM_AS(GemmF16Half4, GemmFloatTiled<F16Tag>)
PG_GEMM_AS(GemmBF16Half4, GemmFloatTiled<BF16Tag>)
PG_GEMM_AS(GemmQ8_0, GemmQ8Tiled<Q8_0Weights>)
PG_GEMM_AS(GemmQ4_0, GemmQ8Tiled<Q4_0Weights>)
PG_GEMM_AS(GemmQ4_K, (GemmKQuant<BlockQ4_K, UnpackQ4K>))
PG_GEMM_AS(GemmQ5_K, (GemmKQuant<BlockQ5_K, UnpackQ5K>))
PG_GEMM_AS(GemmQ6_K, (GemmKQuant<BlockQ6_K, UnpackQ6K>))

}  // namespace pg::avx2
