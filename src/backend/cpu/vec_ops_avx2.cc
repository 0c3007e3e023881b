// AVX2 versions of the vector kernels; see vec_ops_scalar.cc for the reference.
#include <cmath>

#include "backend/cpu/fp16.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/rope_pairs.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {
namespace {

// The loads and element conversions the templates below take, by element type.
inline __m256 LoadF32(const float* p) { return _mm256_loadu_ps(p); }
inline float AsF32(float v) { return v; }

// dst[i] = conv(src[i]), 8 elements at a time through `load`.
template <typename Load>
void WidenRow(const uint16_t* src, float* dst, int64_t n, Load load, float (*conv)(uint16_t)) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load(src + i));
  for (; i < n; ++i) dst[i] = conv(src[i]);
}

}  // namespace

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) { WidenRow(src, dst, n, LoadF16, pg::F16ToF32); }

void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) dst[i] = pg::F32ToF16(src[i]);
}

void BF16ToF32Row(const uint16_t* src, float* dst, int64_t n) { WidenRow(src, dst, n, LoadBF16, pg::BF16ToF32); }

void F32ToBF16Row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, qnan, is_nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
  }
  for (; i < n; ++i) dst[i] = pg::F32ToBF16(src[i]);
}

void RmsNorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    acc0 = _mm256_fmadd_ps(a, a, acc0);
    acc1 = _mm256_fmadd_ps(b, b, acc1);
  }
  double ss = HSum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float s = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
  const __m256 sv = _mm256_set1_ps(s);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sv);
    if (w) v = _mm256_mul_ps(v, _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(y + i, v);
  }
  for (; i < n; ++i) y[i] = x[i] * s * (w ? w[i] : 1.0f);
}

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void Softmax(float* x, int64_t n) {
  int64_t i = 0;
  __m256 mv = _mm256_set1_ps(-INFINITY);
  for (; i + 8 <= n; i += 8) mv = _mm256_max_ps(mv, _mm256_loadu_ps(x + i));
  float mx = HMax(mv);
  for (; i < n; ++i) mx = std::fmax(mx, x[i]);
  const __m256 m = _mm256_set1_ps(mx);
  __m256 sv = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    _mm256_storeu_ps(x + i, e);
    sv = _mm256_add_ps(sv, e);
  }
  double sum = HSum(sv);
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  Scale(x, static_cast<float>(1.0 / sum), n);
}

template <typename T, typename Load>
float DotWith(const T* a, const float* b, int64_t n, Load load, float (*conv)(T)) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm256_fmadd_ps(load(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    }
  }
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(load(a + i), _mm256_loadu_ps(b + i), acc[0]);
  float s = HSum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) s += conv(a[i]) * b[i];
  return s;
}

float DotF32(const float* a, const float* b, int64_t n) { return DotWith(a, b, n, LoadF32, AsF32); }
float DotF16(const uint16_t* a, const float* b, int64_t n) { return DotWith(a, b, n, LoadF16, pg::F16ToF32); }
float DotBF16(const uint16_t* a, const float* b, int64_t n) { return DotWith(a, b, n, LoadBF16, pg::BF16ToF32); }

// y[i] += a * conv(x[i]), 8 elements at a time through `load`.
template <typename T, typename Load>
void AxpyWith(float a, const T* x, float* y, int64_t n, Load load, float (*conv)(T)) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, load(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * conv(x[i]);
}

void AxpyF32(float a, const float* x, float* y, int64_t n) { AxpyWith(a, x, y, n, LoadF32, AsF32); }
void AxpyF16(float a, const uint16_t* x, float* y, int64_t n) { AxpyWith(a, x, y, n, LoadF16, pg::F16ToF32); }
void AxpyBF16(float a, const uint16_t* x, float* y, int64_t n) { AxpyWith(a, x, y, n, LoadBF16, pg::BF16ToF32); }

void Add(float* y, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  }
  for (; i < n; ++i) y[i] += x[i];
}
void Scale(float* x, float s, int64_t n) {
  const __m256 sv = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), sv));
  for (; i < n; ++i) x[i] *= s;
}

void RopeNorm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 sign = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    int64_t i = 0;  // pair index
    for (; i + 4 <= n_rot / 2; i += 4) {
      const __m256 c = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(cos + i)), dup);
      const __m256 s =
          _mm256_mul_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(sin + i)), dup), sign);
      const __m256 a = _mm256_loadu_ps(v + 2 * i);
      const __m256 sw = _mm256_permute_ps(a, 0xB1);  // swap adjacent pairs
      _mm256_storeu_ps(v + 2 * i, _mm256_fmadd_ps(a, c, _mm256_mul_ps(sw, s)));
    }
    RopeNormPairs(v, i, n_rot / 2, cos, sin);
  }
}

void RopeNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    int64_t i = 0;
    for (; i + 8 <= half; i += 8) {
      const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + i + half);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(v + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
      _mm256_storeu_ps(v + i + half, _mm256_fmadd_ps(a, s, _mm256_mul_ps(b, c)));
    }
    RopeNeoxPairs(v, half, i, half, cos, sin);
  }
}

}  // namespace pg::avx2
