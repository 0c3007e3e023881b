// AVX2 versions of DequantizeChunk; see dequant_chunk.h for the arithmetic
// each must reproduce, and quant.cc (DequantizeRow) for the reference.
#include <immintrin.h>

#include "backend/cpu/dequant_chunk.h"
#include "backend/cpu/quant.h"

namespace pg::avx2 {
namespace {

inline float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

// out[0, 8) = s * q[0, 8) (q signed bytes).
inline void ScaleStore8(const int8_t* q, __m256 s, float* out) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
  _mm256_storeu_ps(out, _mm256_mul_ps(s, _mm256_cvtepi32_ps(v)));
}

void Q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const __m256 d = _mm256_set1_ps(HalfToFloat(x[b].d));
    for (int k = 0; k < kQK; k += 8) ScaleStore8(x[b].qs + k, d, y + b * kQK + k);
  }
}

// Q4_K: y = (d * sc) * q - dmin * m per 32-element sub-block.
void Q4_K(const BlockQ4_K* x, float* y, int64_t nb) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ4_K& blk = x[b];
    const float d = HalfToFloat(blk.d), dmin = HalfToFloat(blk.dmin);
    for (int j = 0; j < 8; ++j) {
      const KSubScale s = SubScaleK4(blk.scales, j, d, dmin);
      const __m256 dl = _mm256_set1_ps(s.dl), ml = _mm256_set1_ps(s.ml);
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * (j / 2)));
      alignas(32) uint8_t q[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(q), _mm256_and_si256(_mm256_srli_epi16(bytes, (j & 1) * 4), low4));
      float* out = y + b * kQKK + 32 * j;
      for (int k = 0; k < 32; k += 8) {
        const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + k)));
        _mm256_storeu_ps(out + k, _mm256_sub_ps(_mm256_mul_ps(dl, _mm256_cvtepi32_ps(v)), ml));
      }
    }
  }
}

// Q6_K: y = (d * sc) * (q - 32), q = 4 low bits from ql | 2 high bits from qh << 4.
void Q6_K(const BlockQ6_K* x, float* y, int64_t nb) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03), k32 = _mm256_set1_epi8(32);
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_K& blk = x[b];
    const float d = HalfToFloat(blk.d);
    for (int half = 0; half < 2; ++half) {
      const auto* ql = reinterpret_cast<const __m256i*>(blk.ql + 64 * half);
      const __m256i l0 = _mm256_loadu_si256(ql), l1 = _mm256_loadu_si256(ql + 1);
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * half));
      auto high = [&](int shift) { return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, shift), m2), 4); };
      alignas(32) int8_t q[4][32];  // q[k][l] is element l + 32k of this half, minus 32
      const __m256i v[4] = {_mm256_or_si256(_mm256_and_si256(l0, m4), high(0)),
                            _mm256_or_si256(_mm256_and_si256(l1, m4), high(2)),
                            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), high(4)),
                            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), high(6))};
      for (int k = 0; k < 4; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(q[k]), _mm256_sub_epi8(v[k], k32));
      const int8_t* sc = blk.scales + 8 * half;
      float* yo = y + b * kQKK + 128 * half;
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 32; l += 8) ScaleStore8(q[k] + l, _mm256_set1_ps(d * sc[l / 16 + 2 * k]), yo + 32 * k + l);
    }
  }
}

}  // namespace

bool DequantizeChunk(GgmlType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case GgmlType::Q8_0: Q8_0(static_cast<const BlockQ8_0*>(src), dst, n / kQK); return true;
    case GgmlType::Q4_K: Q4_K(static_cast<const BlockQ4_K*>(src), dst, n / kQKK); return true;
    case GgmlType::Q6_K: Q6_K(static_cast<const BlockQ6_K*>(src), dst, n / kQKK); return true;
    default: return false;
  }
}

}  // namespace pg::avx2
