// Private: the vector types of the AVX-512 GEMM tiles over the 8-row repacked
// layouts (gemm_x8_avx512.cc), with the members gemm_groups_of8.h's Ymm has
// plus the AVX-512 ones (VPDPBUSD, byte masks):
//
// - YmmVnni: one 8-row group in 256 bits, as Ymm (AVX-512VL).
// - Zmm: two consecutive 8-row groups in 512 bits, 16 rows: the low 256 bits
//   hold group g's lanes, the high ones group g + 1's, so lane r is row r of
//   the pair. Every load takes a field of group g's Block and the same field
//   `next` bytes on (group g + 1's Block of the same columns): two 256-bit
//   loads for a 32-byte field, two 8- or 16-byte loads for scales.
//
// Include only from files compiled with AVX-512 F/BW/VL/VNNI flags.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/gemm_groups_of8.h"

namespace pg {
namespace {  // NOLINT(build/namespaces): see gemm_groups_of8.h

struct YmmVnni : Ymm {
  using M = __mmask32;
  using Ymm::Ymm;
  // 32 mask bits, one per byte of a 32-byte field.
  M Bits(const uint32_t* p) const { return _cvtu32_mask32(*p); }
  static I Broadcast4(const void* p) { return pg::Broadcast4(p); }
  static I Dpbusd(I acc, I u, I s) { return _mm256_dpbusd_epi32(acc, u, s); }
  static M TestBytes(I a, I b) { return _mm256_test_epi8_mask(a, b); }
  static I MaskAdd8(I a, M m, I b) { return _mm256_mask_add_epi8(a, m, a, b); }
  static I MaskSub8(I a, M m, I b) { return _mm256_mask_sub_epi8(a, m, a, b); }
};

struct Zmm {
  using I = __m512i;
  using F = __m512;
  using M = __mmask64;
  static constexpr int kRows = 16;
  // `ahead`: how far on the loads prefetch (bytes; 0 = not at all).
  Zmm(ptrdiff_t next, ptrdiff_t ahead) : next_(next), ahead_(ahead) {}

  // Also prefetches the same field `ahead` bytes on, for both groups (two
  // interleaved streams defeat the hardware prefetcher from DRAM).
  I Load(const void* p) const {
    _mm_prefetch(static_cast<const char*>(p) + ahead_, _MM_HINT_T0);
    _mm_prefetch(static_cast<const char*>(Next(p)) + ahead_, _MM_HINT_T0);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(p))),
                              _mm256_loadu_si256(static_cast<const __m256i*>(Next(p))), 1);
  }
  F Halves(const uint16_t* p) const { return _mm512_cvtph_ps(Load16x2(p)); }
  I U8ToI32(const uint8_t* p) const { return _mm512_cvtepu8_epi32(Load8x2(p)); }
  I S8ToI32(const int8_t* p) const { return _mm512_cvtepi8_epi32(Load8x2(p)); }
  I U8ToI16(const uint8_t* p) const { return _mm512_cvtepu8_epi16(Load16x2(p)); }
  I S8PairsToI16(const int8_t* a, const int8_t* b) const {
    const __m128i va = Load8x2(a), vb = Load8x2(b);  // group g's 8 bytes, then group g + 1's
    return _mm512_cvtepi8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(va, vb), _mm_unpacklo_epi8(va, vb)));
  }
  M Bits(const uint32_t* p) const {
    uint32_t hi;
    std::memcpy(&hi, Next(p), 4);
    return _cvtu64_mask64(static_cast<uint64_t>(*p) | (static_cast<uint64_t>(hi) << 32));
  }

  static I Broadcast4(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  static I Dpbusd(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static M TestBytes(I a, I b) { return _mm512_test_epi8_mask(a, b); }
  static I MaskAdd8(I a, M m, I b) { return _mm512_mask_add_epi8(a, m, a, b); }
  static I MaskSub8(I a, M m, I b) { return _mm512_mask_sub_epi8(a, m, a, b); }
  static I Zero() { return _mm512_setzero_si512(); }
  static I Set1(int32_t v) { return _mm512_set1_epi32(v); }
  static I Set1_8(char v) { return _mm512_set1_epi8(v); }
  static I Add(I a, I b) { return _mm512_add_epi32(a, b); }
  static I Add8(I a, I b) { return _mm512_add_epi8(a, b); }
  static I Sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I Mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static I Madd16(I a, I b) { return _mm512_madd_epi16(a, b); }
  static I And(I a, I b) { return _mm512_and_si512(a, b); }
  static I Or(I a, I b) { return _mm512_or_si512(a, b); }
  static I Xor(I a, I b) { return _mm512_xor_si512(a, b); }
  static I Srli16(I a, int n) { return _mm512_srli_epi16(a, n); }
  static I Slli16(I a, int n) { return _mm512_slli_epi16(a, n); }
  static I Slli32(I a, int n) { return _mm512_slli_epi32(a, n); }
  static F FZero() { return _mm512_setzero_ps(); }
  static F Set1Ps(float v) { return _mm512_set1_ps(v); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static F Cvt(I a) { return _mm512_cvtepi32_ps(a); }
  // Rows [lo, hi) of the pair's result v to y[lo..hi) (a masked store).
  static void Store(float* y, F v, int lo, int hi) {
    if (lo == 0 && hi == kRows) {
      _mm512_storeu_ps(y, v);
    } else {
      _mm512_mask_storeu_ps(y, static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1)), v);
    }
  }

 private:
  const void* Next(const void* p) const { return static_cast<const uint8_t*>(p) + next_; }
  // 8 bytes of each group: group g's in bytes 0..7, group g + 1's in 8..15.
  __m128i Load8x2(const void* p) const {
    return _mm_unpacklo_epi64(_mm_loadl_epi64(static_cast<const __m128i*>(p)),
                              _mm_loadl_epi64(static_cast<const __m128i*>(Next(p))));
  }
  // 16 bytes of each group, group g's in the low half.
  __m256i Load16x2(const void* p) const {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p))),
                                   _mm_loadu_si128(static_cast<const __m128i*>(Next(p))), 1);
  }

  ptrdiff_t next_;
  ptrdiff_t ahead_;
};

}  // namespace
}  // namespace pg
