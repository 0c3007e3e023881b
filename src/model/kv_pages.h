// KvPages: how the forward pass sees the KV cache — fixed-size pages in one
// contiguous arena (the device tier), addressed by block id through each
// sequence's block table. The tiered cache (src/kv) owns the arena and the
// block ids; the model only reads and writes rows inside blocks it is given.
// The block layout is KvLayout (base/kv_layout.h), the same type the cache
// uses, so the two cannot disagree about it.
//
//   block b at base + b * block_bytes (block_bytes >= layout.block_bytes()):
//   +-------------------------- layer 0 --------------------------+-- layer 1 ..
//   | K[page_tokens][kv_dim] (f16|bf16) | V[page_tokens][kv_dim]  | K .. | V ..
//   +-------------------------------------------------------------+------------
//   kv_dim = n_kv_heads * head_dim; row s of a page is token slot s.
//
// MLA models (layout.kind == kMla) have one latent row per token and layer
// (Row(block, layer, 0, slot)) and the indexer keys of their indexer layers
// (IndexRow), in the same block (base/kv_layout.h).
//
// Thread-safety: a view; the forward pass writes only slots of the tokens it
// processes and reads slots of positions < its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/kv_layout.h"

namespace pg {

struct KvPages {
  uint8_t* base = nullptr;  // arena start
  size_t block_bytes = 0;   // stride between blocks (>= layout.block_bytes())
  KvLayout layout;          // n_layers, n_kv_heads, head_dim, page_tokens, dtype

  int64_t page_tokens() const { return layout.page_tokens; }  // token slots per block
  int64_t kv_dim() const { return layout.kv_dim(); }          // n_kv_heads * head_dim
  KvDtype dtype() const { return layout.dtype; }

  // Bytes of one block of n_layer layers whose rows hold kv_dim elements.
  static size_t BlockBytes(int64_t n_layer, int64_t kv_dim, int64_t page_tokens) {
    return KvLayout{static_cast<int>(n_layer), 1, static_cast<int>(kv_dim), static_cast<int>(page_tokens)}
        .block_bytes();
  }
  // Row of `kv` (0 = K, 1 = V) for token slot `slot` of `layer` in block `block`.
  uint16_t* Row(int32_t block, int64_t layer, int kv, int64_t slot) const {
    const size_t off = static_cast<size_t>(block) * block_bytes + layout.offset(layer, kv) +
                       static_cast<size_t>(slot) * layout.row_bytes();
    return reinterpret_cast<uint16_t*>(base + off);
  }
  // Indexer key of token slot `slot` for indexer layer `index_slot` (kMla).
  uint16_t* IndexRow(int32_t block, int64_t index_slot, int64_t slot) const {
    const size_t off = static_cast<size_t>(block) * block_bytes + layout.index_offset(index_slot) +
                       static_cast<size_t>(slot) * layout.index_row_bytes();
    return reinterpret_cast<uint16_t*>(base + off);
  }
};

}  // namespace pg
