// AVX-512 VNNI GEMM over the 8-row repacked layouts Q8_0x8, Q5_0x8, Q4_Kx8,
// Q5_Kx8 and Q6_Kx8 (repack.h): tiles of up to 4 tokens x two 8-row groups
// in 512-bit vectors (Zmm: 16 rows, one per 32-bit lane), or x one group in
// 256-bit vectors (YmmVnni: AVX-512VL) for an odd last group of a task.
// Both run the same code (gemm_groups_of8_avx512.h). Where AVX2 needs
// broadcast + maddubs + madd + add per 32-byte load and token, VPDPBUSD
// (u8 x s8, four products added into each int32 lane) does it in one
// instruction, with the token's 4 quants broadcast to every lane:
//
// - Q4_Kx8 / Q5_Kx8 / Q6_Kx8: the levels are unsigned (nibbles, with Q5_K's
//   fifth bits; 6-bit levels before the -32 offset), so they are VPDPBUSD's u8 operand as they are. The
//   products of one sub-block (32 columns for Q4_K, 16 for Q6_K) are summed
//   in their own int32 lanes, then multiplied by the rows' sub-block scales
//   (VPMULLD) into the super-block sum.
// - Q8_0x8 / Q5_0x8: the levels are signed, so the token's quants are made unsigned
//   (x + 128: each 4-quant broadcast XORed with 0x80 bytes) and the weights are the s8 operand:
//   sum (x + 128) w - 128 sum w, where 128 sum w comes from one more VPDPBUSD
//   per load against bytes of 128, shared by the tile's tokens.
//
// Every sum is the exact integer the AVX2 and scalar kernels compute, and the
// float steps after it are theirs, lane by lane, so the results are
// bit-identical to scalar::GemmQ8_0x8 / GemmQ5_0x8 / GemmQ4_Kx8 / GemmQ5_Kx8
// / GemmQ6_Kx8 whichever tile computed a row.
// GCC 12's AVX-512 intrinsics raise false -W(maybe-)uninitialized warnings
// when inlined (see gemm_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <type_traits>

#include "backend/cpu/gemm_groups_of8.h"
#include "backend/cpu/gemm_groups_of8_avx512.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/repack.h"

namespace pg::avx512 {
namespace {

// One Q8_0x8 / Q5_0x8 tile: V::kRows rows x RN tokens over nb blocks. Per
// block sums(v, blk, xb, isum, &wsum) adds sum (x + 128) w to isum[j] and
// 128 sum w to wsum; their difference meets the scales in one FMA. The
// token's 4 quants are broadcast from memory and made unsigned there (XOR
// 0x80 per byte): a load and a simple op, where unsigned quants kept in a
// register cost two shuffles per broadcast.
template <int RN, typename V, typename Block, typename Sums>
void TileSigned8(V v, const Block* g, int64_t nb, const uint8_t* xbase, size_t xs, typename V::F* out, Sums sums) {
  typename V::F acc[RN];
  for (int j = 0; j < RN; ++j) acc[j] = V::FZero();
  for (int64_t b = 0; b < nb; ++b) {
    const Block& blk = g[b];
    const BlockQ8_0* xb[RN];
    typename V::I isum[RN];
    for (int j = 0; j < RN; ++j) {
      xb[j] = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      isum[j] = V::Zero();
    }
    typename V::I wsum = V::Zero();  // 128 * sum w, per row
    sums(v, blk, xb, isum, &wsum);
    const typename V::F wd = v.Halves(blk.d);
    for (int j = 0; j < RN; ++j) {
      const typename V::F d = V::Mul(wd, V::Set1Ps(_cvtsh_ss(xb[j]->d)));
      acc[j] = V::Fmadd(d, V::Cvt(V::Sub(isum[j], wsum)), acc[j]);
    }
  }
  for (int j = 0; j < RN; ++j) out[j] = acc[j];
}

// The 4 quants at p, + 128 (as unsigned bytes), in every lane.
template <typename V>
[[gnu::always_inline]] inline typename V::I Unsigned4(const int8_t* p, typename V::I k128) {
  return V::Xor(V::Broadcast4(p), k128);
}

struct Q8_0Sums {
  template <typename V, int RN>
  void operator()(V v, const BlockQ8_0x8& blk, const BlockQ8_0* const (&xb)[RN], typename V::I (&isum)[RN],
                  typename V::I* wsum) const {
    const typename V::I k128 = V::Set1_8(static_cast<char>(0x80));
    for (int k = 0; k < kQK / 4; ++k) {
      const typename V::I w = v.Load(blk.qs + kQK * k);
      *wsum = V::Dpbusd(*wsum, k128, w);
      for (int j = 0; j < RN; ++j) isum[j] = V::Dpbusd(isum[j], Unsigned4<V>(xb[j]->qs + 4 * k, k128), w);
    }
  }
};

// Q5_0x8: the signed levels rebuilt per load from the nibbles: the low
// (h = 0) and high (h = 1) nibbles, minus 16 in the bytes whose fifth bit is
// 0 (one masked subtract each).
struct Q5_0Sums {
  template <typename V, int RN>
  void operator()(V v, const BlockQ5_0x8& blk, const BlockQ8_0* const (&xb)[RN], typename V::I (&isum)[RN],
                  typename V::I* wsum) const {
    const typename V::I k128 = V::Set1_8(static_cast<char>(0x80)), k16 = V::Set1_8(16);
    for (int k = 0; k < kQK / 8; ++k) {
      typename V::I lo, hi;
      Nibbles<V>(v.Load(blk.qs + 32 * k), &lo, &hi);
      lo = V::MaskSub8(lo, v.Bits(&blk.low16[k][0]), k16);
      hi = V::MaskSub8(hi, v.Bits(&blk.low16[k][1]), k16);
      *wsum = V::Dpbusd(*wsum, k128, V::Add8(lo, hi));
      for (int j = 0; j < RN; ++j) {
        isum[j] = V::Dpbusd(isum[j], Unsigned4<V>(xb[j]->qs + 4 * k, k128), lo);
        isum[j] = V::Dpbusd(isum[j], Unsigned4<V>(xb[j]->qs + 16 + 4 * k, k128), hi);
      }
    }
  }
};

// isum[j] += sum over the 8 sub-blocks of sc * (levels . token j's quants):
// each sub-block's products summed in its own lanes, then VPMULLD by the
// rows' scales. Q4_Kx8's levels are the nibbles; Q5_Kx8's add 16 where the
// fifth bit is set (bit 2p or 2p + 1 of the qh load matching the nibbles):
// one masked byte add per nibble vector, VPTESTMB giving the mask.
template <typename Block>
struct K4Sums {
  template <typename V, int RN>
  void operator()(V v, const Block& blk, const BlockQ8_K* const (&xb)[RN], typename V::I (&isum)[RN]) const {
    using I = typename V::I;
    for (int p = 0; p < 4; ++p) {
      I s_lo[RN], s_hi[RN];  // sub-blocks 2p and 2p + 1
      for (int j = 0; j < RN; ++j) s_lo[j] = s_hi[j] = V::Zero();
      for (int k = 0; k < 8; ++k) {
        I lo, hi;
        Nibbles<V>(v.Load(blk.qs + 256 * p + 32 * k), &lo, &hi);
        if constexpr (std::is_same_v<Block, BlockQ5_Kx8>) {
          const I qh = v.Load(blk.qh + 32 * k), k16 = V::Set1_8(16);
          lo = V::MaskAdd8(lo, V::TestBytes(qh, V::Set1_8(static_cast<char>(1 << (2 * p)))), k16);
          hi = V::MaskAdd8(hi, V::TestBytes(qh, V::Set1_8(static_cast<char>(2 << (2 * p)))), k16);
        }
        for (int j = 0; j < RN; ++j) {
          const int8_t* xq = xb[j]->qs + 64 * p + 4 * k;
          s_lo[j] = V::Dpbusd(s_lo[j], lo, V::Broadcast4(xq));
          s_hi[j] = V::Dpbusd(s_hi[j], hi, V::Broadcast4(xq + 32));
        }
      }
      const I sc_lo = v.U8ToI32(blk.sc[2 * p]), sc_hi = v.U8ToI32(blk.sc[2 * p + 1]);
      for (int j = 0; j < RN; ++j)
        isum[j] = V::Add(isum[j], V::Add(V::Mullo(s_lo[j], sc_lo), V::Mullo(s_hi[j], sc_hi)));
    }
  }
};

// As K4Sums, per 16-column sub-block of the 6-bit levels; the -32 offset
// is left to Q6_KFinish.
struct Q6_KSums {
  template <typename V, int RN>
  void operator()(V v, const BlockQ6_Kx8& blk, const BlockQ8_K* const (&xb)[RN], typename V::I (&isum)[RN]) const {
    using I = typename V::I;
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 2; ++c) {
        for (int half = 0; half < 2; ++half) {  // 4 loads = one 16-column sub-block of each of a and b
          I pa[RN], pb[RN];
          for (int j = 0; j < RN; ++j) pa[j] = pb[j] = V::Zero();
          for (int k = 4 * half; k < 4 * half + 4; ++k) {
            I qa, qb;
            LevelsQ6_Kx8<V>(v.Load(blk.ql + 512 * h + 256 * c + 32 * k), v.Load(blk.qh + 256 * h + 32 * k), c, &qa,
                            &qb);
            const int ea = 128 * h + 32 * c + 4 * k;
            for (int j = 0; j < RN; ++j) {
              pa[j] = V::Dpbusd(pa[j], qa, V::Broadcast4(xb[j]->qs + ea));
              pb[j] = V::Dpbusd(pb[j], qb, V::Broadcast4(xb[j]->qs + ea + 64));
            }
          }
          const int ea = 128 * h + 32 * c + 16 * half, eb = ea + 64;
          const I sa = v.S8ToI32(blk.sc[ea / 16]), sb = v.S8ToI32(blk.sc[eb / 16]);
          for (int j = 0; j < RN; ++j) isum[j] = V::Add(isum[j], V::Add(V::Mullo(pa[j], sa), V::Mullo(pb[j], sb)));
        }
      }
    }
  }
};

}  // namespace

PG_GEMM_GROUPS_OF8(GemmQ8_0x8, BlockQ8_0x8, kQK, YmmVnni, Zmm, TileSigned8, Q8_0Sums{})
PG_GEMM_GROUPS_OF8(GemmQ5_0x8, BlockQ5_0x8, kQK, YmmVnni, Zmm, TileSigned8, Q5_0Sums{})
PG_GEMM_GROUPS_OF8(GemmQ4_Kx8, BlockQ4_Kx8, kQKK, YmmVnni, Zmm, TileX8, K4Sums<BlockQ4_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ5_Kx8, BlockQ5_Kx8, kQKK, YmmVnni, Zmm, TileX8, K4Sums<BlockQ5_Kx8>{}, Q4_KFinish{})
PG_GEMM_GROUPS_OF8(GemmQ6_Kx8, BlockQ6_Kx8, kQKK, YmmVnni, Zmm, TileX8, Q6_KSums{}, Q6_KFinish{})

}  // namespace pg::avx512
