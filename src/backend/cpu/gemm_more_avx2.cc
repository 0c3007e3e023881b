// AVX2 GEMM tiles for Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 (the 32-element
// register tile of gemm_tiles_avx2.h with one weight-loading traits struct
// each), for Q2_K, Q3_K (unpacked into the K-quant tile's form) and IQ4_XS
// (one row x up to 4 tokens, below).
#include <algorithm>
#include <cstring>

#include "backend/cpu/gemm_tiles_avx2.h"
#include "backend/cpu/kernel_impls.h"

namespace pg::avx2 {
namespace {

// 0x10 in byte i where bit i of the little-endian uint32 qh is set.
inline __m256i FifthBits(const uint8_t* qh) {
  const __m256i shuf =
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  int32_t bits;
  std::memcpy(&bits, qh, sizeof(bits));
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(bits), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

inline __m256i LookUp(const int8_t* table16, const uint8_t* qs) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table16)));
  return _mm256_shuffle_epi8(table, LoadNibbles(qs));
}

struct Q4_1Weights {
  using Block = BlockQ4_1;
  static constexpr bool kHasMin = true;
  static __m256i Load(const Block* b) { return LoadNibbles(b->qs); }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block* b) { return H2F(b->m); }
};

struct Q5_0Weights {
  using Block = BlockQ5_0;
  static constexpr bool kHasMin = false;
  static __m256i Load(const Block* b) {
    return _mm256_sub_epi8(_mm256_or_si256(LoadNibbles(b->qs), FifthBits(b->qh)), _mm256_set1_epi8(16));
  }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block*) { return 0.0f; }
};

struct Q5_1Weights {
  using Block = BlockQ5_1;
  static constexpr bool kHasMin = true;
  static __m256i Load(const Block* b) { return _mm256_or_si256(LoadNibbles(b->qs), FifthBits(b->qh)); }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block* b) { return H2F(b->m); }
};

struct IQ4_NLWeights {
  using Block = BlockIQ4_NL;
  static constexpr bool kHasMin = false;
  static __m256i Load(const Block* b) { return LookUp(kIq4nlValues, b->qs); }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block*) { return 0.0f; }
};

struct MXFP4Weights {
  using Block = BlockMXFP4;
  static constexpr bool kHasMin = false;
  static __m256i Load(const Block* b) { return LookUp(kFp4Values, b->qs); }
  // 2^(e - 128) built from its bits (the value of Mxfp4Scale).
  static float Scale(const Block* b) {
    const uint32_t bits = b->e < 2 ? 0x00200000u << b->e : static_cast<uint32_t>(b->e - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  static float Min(const Block*) { return 0.0f; }
};

// The 2-bit levels of chunk c = 4h + k (elements 32c .. 32c + 31) are bits
// 2k..2k+1 of qs[32h .. 32h + 31].
inline void UnpackLow2Bits(const uint8_t* qs, uint8_t* q) {
  const __m256i m3 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h));
    for (int k = 0; k < 4; ++k) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * (4 * h + k)),
                         _mm256_and_si256(_mm256_srli_epi16(raw, 2 * k), m3));
    }
  }
}

// Per-chunk scale vectors: 8 x scale(first 16 of chunk c), 8 x scale(second 16).
inline void SetScales16(const int16_t* sc16, UnpackedK& u) {
  for (int c = 0; c < 8; ++c) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(u.scv[c]),
                       _mm256_set_m128i(_mm_set1_epi16(sc16[2 * c + 1]), _mm_set1_epi16(sc16[2 * c])));
  }
}

void UnpackQ2K(const BlockQ2_K& b, UnpackedK& u) {
  UnpackLow2Bits(b.qs, u.q);
  int16_t sc[16];
  for (int j = 0; j < 16; ++j) {
    sc[j] = static_cast<int16_t>(b.scales[j] & 15);
    u.mo[j] = static_cast<int16_t>(b.scales[j] >> 4);
  }
  SetScales16(sc, u);
  u.d = H2F(b.d);
  u.dmo = H2F(b.dmin);
}

// Levels q in [0, 7] (weight d * s * (q - 4)): offsets mo = 4 * s against bsums.
void UnpackQ3K(const BlockQ3_K& b, UnpackedK& u) {
  UnpackLow2Bits(b.qs, u.q);
  const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hmask));
  const __m256i four = _mm256_set1_epi8(4);
  for (int c = 0; c < 8; ++c) {
    const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << c));
    const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit), four);
    auto* q = reinterpret_cast<__m256i*>(u.q + 32 * c);
    _mm256_store_si256(q, _mm256_or_si256(_mm256_load_si256(q), high));
  }
  int8_t s8[16];
  UnpackScalesQ3K(b.scales, s8);
  int16_t sc[16];
  for (int j = 0; j < 16; ++j) {
    sc[j] = s8[j];
    u.mo[j] = static_cast<int16_t>(4 * s8[j]);
  }
  SetScales16(sc, u);
  u.d = H2F(b.d);
  u.dmo = u.d;
}

// IQ4_XS: one row x RN tokens. Per 32-element sub-block the 32 table values
// (signed) meet the token's quants through sign + maddubs, and one madd with
// the sub-block's scale adds ls * (pair sums) to the int32 super-block sum;
// then one FMA per super-block.
template <int RN>
void RowIQ4_XS(const BlockIQ4_XS* wr, int64_t nb, const uint8_t* xbase, size_t xs, float* out) {
  __m256 acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockIQ4_XS& wb = wr[b];
    __m256i isum[RN];
    for (int j = 0; j < RN; ++j) isum[j] = _mm256_setzero_si256();
    for (int s = 0; s < kQKK / 32; ++s) {
      const int lo = (wb.scales_l[s / 2] >> (4 * (s % 2))) & 15, hi = (wb.scales_h >> (2 * s)) & 3;
      const __m256i ls = _mm256_set1_epi16(static_cast<int16_t>((lo | (hi << 4)) - 32));
      const __m256i w = LookUp(kIq4nlValues, wb.qs + 16 * s);
      for (int j = 0; j < RN; ++j) {
        const auto* xb = reinterpret_cast<const BlockQ8_K*>(xbase + j * xs) + b;
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs + 32 * s));
        // Q8_K quants reach -128, whose |x| is 128 only as an unsigned byte:
        // x is maddubs' unsigned side, w (|w| <= 127) takes x's sign.
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(w, x));
        isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p16, ls));
      }
    }
    for (int j = 0; j < RN; ++j) {
      const float xd = (reinterpret_cast<const BlockQ8_K*>(xbase + j * xs) + b)->d;
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(H2F(wb.d) * xd), _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = HSum(acc[j]);
}

}  // namespace

#define PG_GEMM_Q8_TILED(T)                                                                                      \
  void Gemm##T(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, \
               float* y, int64_t ldy) {                                                                          \
    GemmQ8Tiled<T##Weights>(w, xa, xs, t0, t1, r0, r1, y, ldy);                                                  \
  }
PG_GEMM_Q8_TILED(Q4_1)
PG_GEMM_Q8_TILED(Q5_0)
PG_GEMM_Q8_TILED(Q5_1)
PG_GEMM_Q8_TILED(IQ4_NL)
PG_GEMM_Q8_TILED(MXFP4)
#undef PG_GEMM_Q8_TILED

PG_GEMM_AS(GemmQ2_K, (GemmKQuant<BlockQ2_K, UnpackQ2K>))
PG_GEMM_AS(GemmQ3_K, (GemmKQuant<BlockQ3_K, UnpackQ3K>))
void GemmIQ4_XS(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  constexpr int RN = 4;
  const int64_t nb = w.cols / kQKK;
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t r = r0; r < r1; ++r) {
    const auto* wr = reinterpret_cast<const BlockIQ4_XS*>(static_cast<const uint8_t*>(w.data) + r * w.row_bytes);
    for (int64_t t = t0; t < t1; t += RN) {
      float out[RN];
      const uint8_t* xt = xbase + t * xs;
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      switch (rn) {
        case 4: RowIQ4_XS<4>(wr, nb, xt, xs, out); break;
        case 3: RowIQ4_XS<3>(wr, nb, xt, xs, out); break;
        case 2: RowIQ4_XS<2>(wr, nb, xt, xs, out); break;
        default: RowIQ4_XS<1>(wr, nb, xt, xs, out); break;
      }
      for (int j = 0; j < rn; ++j) y[(t + j) * ldy + r] = out[j];
    }
  }
}

}  // namespace pg::avx2
