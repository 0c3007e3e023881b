// Scalar reference dot products and GEMM tiles for Q4_1, Q5_0, Q5_1, IQ4_NL,
// MXFP4 (against Q8_0 activations) and Q2_K, Q3_K, IQ4_XS (against Q8_K).
//
// Each block's products are summed exactly in int32; the float scales apply
// once per block (per super-block for the 256-element types):
//   Q4_1 / Q5_1 : d_w d_x sum(q * xq) + m_w d_x sum(xq)
//   Q5_0        : d_w d_x sum((q - 16) * xq)
//   IQ4_NL      : d_w d_x sum(kIq4nlValues[q] * xq)
//   MXFP4       : 2^(e-128) d_x sum(kFp4Values[q] * xq)
//   Q2_K        : d_x (d sum_j sc_j sum_j(q * xq) - dmin sum_j m_j bsum_j)
//   Q3_K        : d_x d sum_j s_j sum_j((q - 4) * xq)
//   IQ4_XS      : d_x d sum_j ls_j sum_j(kIq4nlValues[q] * xq)
#include "backend/cpu/fp16.h"
#include "backend/cpu/gemm_tile.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_levels.h"

namespace pg::scalar {
namespace {

int SumQ8(const int8_t* xq) {
  int s = 0;
  for (int i = 0; i < kQK; ++i) s += xq[i];
  return s;
}

// Q4_1 / Q5_1: levels q with an offset m.
template <typename Block, int (*Level)(const Block&, int)>
float DotWithMin(const Block* w, const BlockQ8_0* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int s = 0;
    for (int i = 0; i < kQK; ++i) s += Level(w[b], i) * x[b].qs[i];
    const float dx = F16ToF32(x[b].d);
    sum += F16ToF32(w[b].d) * dx * static_cast<float>(s) + F16ToF32(w[b].m) * dx * static_cast<float>(SumQ8(x[b].qs));
  }
  return sum;
}

int LevelQ4_1(const BlockQ4_1& b, int i) { return NibbleAt(b.qs, i); }
int LevelQ5_1(const BlockQ5_1& b, int i) { return Q5LevelAt(b.qs, LoadQh(b.qh), i); }

int LevelQ5_0(const BlockQ5_0& b, int i) { return Q5LevelAt(b.qs, LoadQh(b.qh), i) - 16; }
int LevelIQ4_NL(const BlockIQ4_NL& b, int i) { return kIq4nlValues[NibbleAt(b.qs, i)]; }
int LevelMXFP4(const BlockMXFP4& b, int i) { return kFp4Values[NibbleAt(b.qs, i)]; }
float ScaleMXFP4(const BlockMXFP4& b) { return Mxfp4Scale(b.e); }

}  // namespace

float DotQ4_1(const BlockQ4_1* w, const BlockQ8_0* x, int64_t nb) { return DotWithMin<BlockQ4_1, LevelQ4_1>(w, x, nb); }
float DotQ5_1(const BlockQ5_1* w, const BlockQ8_0* x, int64_t nb) { return DotWithMin<BlockQ5_1, LevelQ5_1>(w, x, nb); }

float DotQ5_0(const BlockQ5_0* w, const BlockQ8_0* x, int64_t nb) {
  return DotSigned<BlockQ5_0, LevelQ5_0, F16Scale<BlockQ5_0>>(w, x, nb);
}
float DotIQ4_NL(const BlockIQ4_NL* w, const BlockQ8_0* x, int64_t nb) {
  return DotSigned<BlockIQ4_NL, LevelIQ4_NL, F16Scale<BlockIQ4_NL>>(w, x, nb);
}
float DotMXFP4(const BlockMXFP4* w, const BlockQ8_0* x, int64_t nb) {
  return DotSigned<BlockMXFP4, LevelMXFP4, ScaleMXFP4>(w, x, nb);
}

float DotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int sumi = 0, summ = 0;
    for (int j = 0; j < kQKK / 16; ++j) {
      int s = 0;
      for (int i = 16 * j; i < 16 * j + 16; ++i) s += Q2KLevelAt(w[b], i) * x[b].qs[i];
      sumi += (w[b].scales[j] & 15) * s;
      summ += (w[b].scales[j] >> 4) * x[b].bsums[j];
    }
    sum += x[b].d * (F16ToF32(w[b].d) * static_cast<float>(sumi) - F16ToF32(w[b].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float DotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int8_t sc[16];
    UnpackScalesQ3K(w[b].scales, sc);
    int sumi = 0;
    for (int j = 0; j < kQKK / 16; ++j) {
      int s = 0;
      for (int i = 16 * j; i < 16 * j + 16; ++i) s += (Q3KLevelAt(w[b], i) - 4) * x[b].qs[i];
      sumi += sc[j] * s;
    }
    sum += x[b].d * F16ToF32(w[b].d) * static_cast<float>(sumi);
  }
  return sum;
}

float DotIQ4_XS(const BlockIQ4_XS* w, const BlockQ8_K* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int sumi = 0;
    for (int j = 0; j < kQKK / 32; ++j) {
      int s = 0;
      for (int i = 0; i < kQK; ++i) s += kIq4nlValues[NibbleAt(w[b].qs + 16 * j, i)] * x[b].qs[32 * j + i];
      sumi += Iq4xsScaleAt(w[b], j) * s;
    }
    sum += x[b].d * F16ToF32(w[b].d) * static_cast<float>(sumi);
  }
  return sum;
}

#define PG_GEMM_BY_DOT(T, XB, BE)                                                                                \
  void Gemm##T(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, \
               float* y, int64_t ldy) {                                                                          \
    GemmByDot<Block##T, XB, Dot##T>(w, xa, xs, t0, t1, r0, r1, y, ldy, BE);                                      \
  }
PG_GEMM_BY_DOT(Q4_1, BlockQ8_0, kQK)
PG_GEMM_BY_DOT(Q5_0, BlockQ8_0, kQK)
PG_GEMM_BY_DOT(Q5_1, BlockQ8_0, kQK)
PG_GEMM_BY_DOT(IQ4_NL, BlockQ8_0, kQK)
PG_GEMM_BY_DOT(MXFP4, BlockQ8_0, kQK)
PG_GEMM_BY_DOT(Q2_K, BlockQ8_K, kQKK)
PG_GEMM_BY_DOT(Q3_K, BlockQ8_K, kQKK)
PG_GEMM_BY_DOT(IQ4_XS, BlockQ8_K, kQKK)
#undef PG_GEMM_BY_DOT

}  // namespace pg::scalar
