// K/V rows into pages (kv_write.h).
#include "gpu/kernels/dequant.cuh"
#include "gpu/kernels/kv_write.h"

namespace pg::gpu {
namespace {

PG_GLOBAL void WriteKvKernel(const float* k, const float* v, const int32_t* slot_mapping, DeviceKvPages kv,
                             int64_t layer) {
  const int64_t t = blockIdx.x;
  const int32_t m = slot_mapping[t];
  if (m < 0) return;
  const int32_t block = m / kv.page_tokens;
  const int64_t slot = m % kv.page_tokens;
  uint16_t* kr = kv.Row(block, layer, 0, slot);
  uint16_t* vr = kv.Row(block, layer, 1, slot);
  const int64_t n = kv.kv_dim();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float a = k[t * n + i], b = v[t * n + i];
    kr[i] = kv.bf16 ? FloatToBf16(a) : FloatToHalf(a);
    vr[i] = kv.bf16 ? FloatToBf16(b) : FloatToHalf(b);
  }
}

}  // namespace

gpuError_t WriteKvRows(const float* k, const float* v, int64_t n_tokens, const int32_t* slot_mapping,
                       const DeviceKvPages& kv, int64_t layer, gpuStream_t s) {
  if (n_tokens < 0 || kv.page_tokens <= 0 || kv.kv_dim() <= 0 || layer < 0) return gpuErrorInvalidValue;
  if (n_tokens == 0) return gpuSuccess;
  PG_LAUNCH(WriteKvKernel, dim3(static_cast<unsigned>(n_tokens)), 128, 0, s, k, v, slot_mapping, kv, layer);
  return gpuGetLastError();
}

}  // namespace pg::gpu
