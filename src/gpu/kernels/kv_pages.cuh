// DeviceKvPages: the KV arena in device memory, read and written by the
// kernels in prosgrow's own block layout (base/kv_layout.h, model/kv_pages.h):
//
//   block b at base + b * block_bytes:
//   | layer 0: K[page_tokens][kv_dim] V[page_tokens][kv_dim] | layer 1: K .. V .. | ...
//   kv_dim = n_kv_heads * head_dim; elements f16 or bf16; row s = token slot s.
//
// MLA models (rows_per_layer 1): one latent row per token and layer, then the
// indexer keys of the n_index_layers indexer layers (index_dim elements each):
//   | latent[page_tokens][kv_dim] of layer 0 | ... of layer n_layers-1 | index keys of slot 0 | ...
// and the elements may be f32 (`--attn precise`'s MLA cache).
//
// A plain value (pointers into device memory); make one from a KvLayout with
// FromLayout so the two layouts cannot disagree.
#pragma once

#include <cstdint>

#include "gpu/kernels/dequant.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

struct DeviceKvPages {
  uint8_t* base = nullptr;  // device arena
  int64_t block_bytes = 0;  // stride between blocks (>= the layout's block bytes)
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t page_tokens = 0;
  bool bf16 = false;           // element type: bf16, else f16 (unless f32)
  bool f32 = false;            // MLA only: f32 elements
  int32_t rows_per_layer = 2;  // 2: K and V; 1: the MLA latent row
  int32_t n_layers = 0;        // MLA: layers before the indexer keys
  int32_t index_dim = 0;       // MLA: elements of one indexer key

  PG_HOST_DEVICE int64_t elem_bytes() const { return f32 ? 4 : 2; }
  PG_HOST_DEVICE int64_t kv_dim() const { return int64_t(n_kv_heads) * head_dim; }
  PG_HOST_DEVICE int64_t row_bytes() const { return kv_dim() * elem_bytes(); }
  // Row of `kv` (0 = K, 1 = V) for token slot `slot` of `layer` in `block`.
  PG_HOST_DEVICE uint16_t* Row(int32_t block, int64_t layer, int kv, int64_t slot) const {
    const int64_t off = int64_t(block) * block_bytes +
                        (layer * rows_per_layer + kv) * int64_t(page_tokens) * row_bytes() + slot * row_bytes();
    return reinterpret_cast<uint16_t*>(base + off);
  }
  // Indexer key of token slot `slot` for indexer layer `index_slot` (MLA).
  PG_HOST_DEVICE uint16_t* IndexRow(int32_t block, int64_t index_slot, int64_t slot) const {
    const int64_t key_bytes = int64_t(index_dim) * elem_bytes();
    const int64_t off = int64_t(block) * block_bytes + int64_t(n_layers) * page_tokens * row_bytes() +
                        index_slot * page_tokens * key_bytes + slot * key_bytes;
    return reinterpret_cast<uint16_t*>(base + off);
  }
  // Element i of a row (f16, bf16 or f32) as f32; and the store, rounded to nearest even.
  PG_DEVICE float Load(const uint16_t* row, int64_t i) const {
    if (f32) return reinterpret_cast<const float*>(row)[i];
    return bf16 ? Bf16ToFloat(row[i]) : HalfToFloat(row[i]);
  }
  PG_DEVICE void Store(uint16_t* row, int64_t i, float v) const {
    if (f32)
      reinterpret_cast<float*>(row)[i] = v;
    else
      row[i] = bf16 ? FloatToBf16(v) : FloatToHalf(v);
  }
};

}  // namespace pg::gpu
