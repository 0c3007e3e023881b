// DeviceKvPages: the KV arena in device memory, read and written by the
// kernels in prosgrow's own block layout (base/kv_layout.h, model/kv_pages.h):
//
//   block b at base + b * block_bytes:
//   | layer 0: K[page_tokens][kv_dim] V[page_tokens][kv_dim] | layer 1: K .. V .. | ...
//   kv_dim = n_kv_heads * head_dim; elements f16 or bf16; row s = token slot s.
//
// A plain value (pointers into device memory); make one from a KvLayout with
// FromLayout so the two layouts cannot disagree.
#pragma once

#include <cstdint>

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

struct DeviceKvPages {
  uint8_t* base = nullptr;  // device arena
  int64_t block_bytes = 0;  // stride between blocks (>= the layout's block bytes)
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t page_tokens = 0;
  bool bf16 = false;  // element type: bf16, else f16

  PG_HOST_DEVICE int64_t kv_dim() const { return int64_t(n_kv_heads) * head_dim; }
  PG_HOST_DEVICE int64_t row_bytes() const { return kv_dim() * 2; }
  // Row of `kv` (0 = K, 1 = V) for token slot `slot` of `layer` in `block`.
  PG_HOST_DEVICE uint16_t* Row(int32_t block, int64_t layer, int kv, int64_t slot) const {
    const int64_t off =
        int64_t(block) * block_bytes + (layer * 2 + kv) * int64_t(page_tokens) * row_bytes() + slot * row_bytes();
    return reinterpret_cast<uint16_t*>(base + off);
  }
};

}  // namespace pg::gpu
