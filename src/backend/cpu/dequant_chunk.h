// DequantizeChunk: whole weight blocks to f32, for MatMulPrecise
// (matmul_precise.h), with AVX2 versions of the common weight types.
//
// The values are DequantizeRow's (quant.h) bit for bit, which is the scalar
// reference: every SIMD version performs the same f32 operations in the same
// order per element (Q8_0: d * q; Q4_K: (d * sc) * q - dmin * m; Q6_K:
// (d * sc) * (q - 32)), and dequantize_chunk_test.cc compares them on random
// blocks. Types without a SIMD version use DequantizeRow.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"

namespace pg {

// dst[0, n) = the n elements of a row of `type` starting at src (src at a
// block boundary, n a whole number of blocks; `type` one DequantizeRow reads).
void DequantizeChunk(GgmlType type, const void* src, float* dst, int64_t n);

// The same through the scalar reference only, or through the AVX2 versions
// (false: no AVX2 version for `type`, dst untouched). Tests.
void DequantizeChunkScalar(GgmlType type, const void* src, float* dst, int64_t n);
namespace avx2 {
bool DequantizeChunk(GgmlType type, const void* src, float* dst, int64_t n);
}  // namespace avx2

}  // namespace pg
