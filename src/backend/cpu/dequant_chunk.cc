#include "backend/cpu/dequant_chunk.h"

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/quant.h"

namespace pg {

void DequantizeChunkScalar(GgmlType type, const void* src, float* dst, int64_t n) {
  (void)DequantizeRow(type, src, dst, n);  // callers pass whole blocks of a readable type
}

void DequantizeChunk(GgmlType type, const void* src, float* dst, int64_t n) {
  static const bool kAvx2 = ActiveIsa() >= IsaLevel::kAvx2;
  if (kAvx2 && avx2::DequantizeChunk(type, src, dst, n)) return;
  DequantizeChunkScalar(type, src, dst, n);
}

}  // namespace pg
