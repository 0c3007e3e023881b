// AVX-512 (F/BW/VL/DQ + VNNI) kernels for the hottest paths. Q8_0/Q4_0 use
// VPDPBUSD (u8 x s8 -> s32 in one instruction, no int16 saturation) on
// 256-bit vectors with a 4 x 4 register tile (AVX-512VL gives 32 vector
// registers); F16 weights use 512-bit FMAs. The activation quantizers
// (Q8_0, and Q8_K for the K-quants) are here too, bit for bit the scalar
// ones. Everything else in the AVX-512 table is the AVX2 kernel.
// GCC 12's AVX-512 intrinsics (the _mm512_undefined_* idiom) raise false
// -W(maybe-)uninitialized warnings when inlined; silence them for this file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/fp16.h"
#include "backend/cpu/gemm_tile_walk.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/simd_avx512.h"

namespace pg::avx512 {
namespace {

inline float H2F(uint16_t h) { return _cvtsh_ss(h); }

// Own reduction: GCC 12's _mm512_reduce_max_ps trips -Wmaybe-uninitialized.
inline float ReduceMax(__m512 v) {
  __m256 m = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_maskz_extractf32x8_ps(0xFF, v, 1));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i LoadWeights(const BlockQ8_0* b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs)); }
inline __m256i LoadWeights(const BlockQ4_0* b) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

template <typename WBlock, int RM, int RN>
void TileQ8(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    float xd[RN];
    for (int j = 0; j < RN; ++j) xd[j] = H2F(reinterpret_cast<const BlockQ8_0*>(xbase + j * xs)[b].d);
    for (int i = 0; i < RM; ++i) {
      const WBlock* wb = reinterpret_cast<const WBlock*>(wbase + i * wstride) + b;
      const __m256i w = LoadWeights(wb);
      const __m256i w_abs = _mm256_abs_epi8(w);
      const float wd = H2F(wb->d);
      for (int j = 0; j < RN; ++j) {
        const __m256i x = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ8_0*>(xbase + j * xs)[b].qs));
        const __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), w_abs, _mm256_sign_epi8(x, w));
        acc[i][j] = _mm256_fmadd_ps(_mm256_set1_ps(wd * xd[j]), _mm256_cvtepi32_ps(dot), acc[i][j]);
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

template <typename WBlock>
void GemmQ8Tiled(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                 float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQK;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileQ8<WBlock, RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

inline __m512 LoadF16x16(const uint16_t* p) {
  return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <int RM, int RN>
void TileF16(const uint8_t* wbase, size_t wstride, const float* x, int64_t ldx, int64_t cols, float* y, int64_t ldy) {
  __m512 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    __m512 xv[RN];
    for (int j = 0; j < RN; ++j) xv[j] = _mm512_loadu_ps(x + j * ldx + c);
    for (int i = 0; i < RM; ++i) {
      const __m512 wv = LoadF16x16(reinterpret_cast<const uint16_t*>(wbase + i * wstride) + c);
      for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_fmadd_ps(wv, xv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < RM; ++i) {
    const auto* wr = reinterpret_cast<const uint16_t*>(wbase + i * wstride);
    for (int j = 0; j < RN; ++j) {
      float s = HSum512(acc[i][j]);
      for (int64_t k = c; k < cols; ++k) s += pg::F16ToF32(wr[k]) * x[j * ldx + k];
      y[j * ldy + i] = s;
    }
  }
}

// The 32-element steps of a dot product: acc0 / acc1 += the products of
// elements [i, i + 16) / [i + 16, i + 32) (a's through `load`); returns the
// first index left for the caller's tail.
template <typename T, typename Load>
inline int64_t Dot32Steps(const T* a, const float* b, int64_t n, Load load, __m512& acc0, __m512& acc1) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(load(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(load(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  return i;
}

inline __m512 LoadF32x16(const float* p) { return _mm512_loadu_ps(p); }

}  // namespace

void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const __m512 sign = _mm512_set1_ps(-0.0f);
    const float amax = ReduceMax(_mm512_max_ps(_mm512_andnot_ps(sign, v0), _mm512_andnot_ps(sign, v1)));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[b].d = static_cast<uint16_t>(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    const __m512 m = _mm512_set1_ps(id);
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512i i0 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v0, m), kRound);
    const __m512i i1 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v1, m), kRound);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[b].qs), _mm512_cvtsepi32_epi8(i0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[b].qs + 16), _mm512_cvtsepi32_epi8(i1));
  }
}

// As scalar::QuantizeQ8_K, bit for bit: the value of largest magnitude is
// the first one that reaches the maximum (NaNs never do: VMAXPS returns its
// second operand, the running maximum, when the first is a NaN); the levels
// are the same float products rounded to nearest even, clamped at 127 and
// truncated to 8 bits (a NaN's integer indefinite becomes 0, as the scalar
// cast does); each bsum is the sum of one vector's 16 levels.
void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n) {
  constexpr int kVecs = kQKK / 16;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    BlockQ8_K& o = dst[b];
    __m512 v[kVecs];
    __m512 vmax = _mm512_setzero_ps();
    for (int i = 0; i < kVecs; ++i) {
      v[i] = _mm512_loadu_ps(x + 16 * i);
      vmax = _mm512_max_ps(_mm512_andnot_ps(sign, v[i]), vmax);
    }
    const float amax = ReduceMax(vmax);
    if (amax == 0) {
      std::memset(&o, 0, sizeof(o));
      continue;
    }
    float mx = 0;
    const __m512 am = _mm512_set1_ps(amax);
    for (int i = 0; i < kVecs; ++i) {
      const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_andnot_ps(sign, v[i]), am, _CMP_EQ_OQ);
      if (hit != 0) {
        mx = x[16 * i + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -128.0f / mx;
    const __m512 m = _mm512_set1_ps(iscale);
    const __m512i k127 = _mm512_set1_epi32(127);
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    for (int i = 0; i < kVecs; ++i) {
      const __m512i q = _mm512_min_epi32(_mm512_cvt_roundps_epi32(_mm512_mul_ps(m, v[i]), kRound), k127);
      const __m128i q8 = _mm512_cvtepi32_epi8(q);  // truncating, as the scalar cast
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o.qs + 16 * i), q8);
      const __m512i w = _mm512_cvtepi8_epi32(q8);
      const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(w), _mm512_extracti32x8_epi32(w, 1));
      __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
      o.bsums[i] = static_cast<int16_t>(_mm_cvtsi128_si32(s));
    }
    o.d = 1.0f / iscale;
  }
}

float DotF32(const float* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  const int64_t i = Dot32Steps(a, b, n, LoadF32x16, acc0, acc1);
  if (i < n) {
    const __mmask16 m0 = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, a + i), _mm512_maskz_loadu_ps(m0, b + i), acc0);
    if (n - i > 16) {
      const __mmask16 m1 = static_cast<__mmask16>((1u << (n - i - 16)) - 1);
      acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, a + i + 16), _mm512_maskz_loadu_ps(m1, b + i + 16), acc1);
    }
  }
  return HSum512(_mm512_add_ps(acc0, acc1));
}

float DotF16(const uint16_t* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = Dot32Steps(a, b, n, LoadF16x16, acc0, acc1);
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(LoadF16x16(a + i), _mm512_loadu_ps(b + i), acc0);
  float s = HSum512(_mm512_add_ps(acc0, acc1));
  for (; i < n; ++i) s += pg::F16ToF32(a[i]) * b[i];
  return s;
}

void AxpyF16(float a, const uint16_t* x, float* y, int64_t n) {
  const __m512 av = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, LoadF16x16(x + i), _mm512_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += a * pg::F16ToF32(x[i]);
}

PG_GEMM_AS(GemmQ8_0, GemmQ8Tiled<BlockQ8_0>)
PG_GEMM_AS(GemmQ4_0, GemmQ8Tiled<BlockQ4_0>)

void GemmF16(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, float* y,
             int64_t ldy) {
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const int64_t ldx = static_cast<int64_t>(xs / sizeof(float));
  const float* x = static_cast<const float*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileF16<RM, RN>(wbase + r * w.row_bytes, w.row_bytes, x + t * ldx, ldx, w.cols, y + t * ldy + r, ldy);
  });
}

}  // namespace pg::avx512
