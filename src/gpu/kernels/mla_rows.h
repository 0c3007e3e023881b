// The per-token row work of an MLA layer on the device (the CPU's
// MlaLayerRun stages 2 and 3, model/mla_layer.cc):
//
//   MlaCosSin      cos / sin (T, rope / 2) of each token's position with
//                  YaRN's frequencies and magnitude: the angle pos * inv_freq
//                  and its cos / sin in double, times mag, rounded to f32
//                  (MlaCosSin, model/mla_layer.h)
//   MlaLatentRows  kv (T, kv_lora + rope): RMSNorm of the latent (sum of
//                  squares in double, in element order, as the scalar
//                  RmsNorm) times kv_a_norm, RoPE NORM on the rope part, and
//                  the row stored (f16 / bf16 rounding, or f32) in the token's
//                  slot of `layer`
//   IndexerKeys    ik (T, dim): LayerNorm with eps 0 (mean and variance in
//                  double), * w + b, RoPE NORM on the first rope dims, stored
//                  in the token's slot of indexer layer `index_slot`; and the
//                  head weights iw (T, heads) *= w_scale
//   RopeHeads      RoPE NORM on dims [off, off + rope) of each of `heads`
//                  heads (stride `stride`) of x (T, heads * stride); with dst,
//                  the rotated dims also go to dst[(t * heads + h) * dst_stride + dst_off ...]
//                  (q_pe into the absorbed query)
//
// slots: (T) block * page_tokens + slot of each token (negative: not stored).
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// Cos and sin of the step: the shared inputs of every RoPE below.
struct RopeTable {
  const float* cos = nullptr;  // (T, rope / 2)
  const float* sin = nullptr;
  int64_t rope = 0;  // rotated dims (even)
};

// inv_freq: (rope / 2) doubles; pos: (T).
gpuError_t MlaCosSin(const double* inv_freq, double mag, int64_t rope, const int32_t* pos, int64_t T, float* cos_out,
                     float* sin_out, gpuStream_t s);

gpuError_t MlaLatentRows(float* kv, const float* norm_w, float eps, int64_t T, int64_t kv_lora, const RopeTable& rt,
                         const int32_t* slots, const DeviceKvPages& pages, int64_t layer, gpuStream_t s);

gpuError_t IndexerKeys(float* ik, const float* w, const float* b, int64_t T, int64_t dim, const RopeTable& rt,
                       const int32_t* slots, const DeviceKvPages& pages, int64_t index_slot, float* iw, int64_t heads,
                       float w_scale, gpuStream_t s);

gpuError_t RopeHeads(float* x, int64_t T, int64_t heads, int64_t stride, int64_t off, const RopeTable& rt, float* dst,
                     int64_t dst_stride, int64_t dst_off, gpuStream_t s);

}  // namespace pg::gpu
