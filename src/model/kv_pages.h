// KvPages: how the forward pass sees the KV cache — fixed-size pages in one
// contiguous arena (the device tier), addressed by block id through each
// sequence's block table. The tiered cache (src/kv) owns the arena and the
// block ids; the model only reads and writes rows inside blocks it is given.
//
// One block holds page_tokens token slots for every layer, K and V:
//
//   block b (block_bytes) at base + b * block_bytes:
//   +-------------------------- layer 0 --------------------------+-- layer 1 ..
//   | K[page_tokens][kv_dim] (f16|bf16) | V[page_tokens][kv_dim]  | K .. | V ..
//   +-------------------------------------------------------------+------------
//   kv_dim = n_head_kv * head_dim; row s of a page is token slot s.
//
// Thread-safety: a view; the forward pass writes only slots of the tokens it
// processes and reads slots of positions < its own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pg {

enum class KvElemType { kF16, kBF16 };

struct KvPages {
  uint8_t* base = nullptr;    // arena start
  size_t block_bytes = 0;     // stride between blocks (>= the bytes one block needs)
  int64_t page_tokens = 16;   // token slots per block
  int64_t kv_dim = 0;         // n_head_kv * head_dim
  KvElemType dtype = KvElemType::kF16;

  static size_t BlockBytes(int64_t n_layer, int64_t kv_dim, int64_t page_tokens) {
    return static_cast<size_t>(n_layer) * 2 * static_cast<size_t>(page_tokens * kv_dim) * 2;
  }
  // Row of `kv` (0 = K, 1 = V) for token slot `slot` of `layer` in block `block`.
  uint16_t* Row(int32_t block, int64_t layer, int kv, int64_t slot) const {
    size_t off = static_cast<size_t>(block) * block_bytes +
                 (static_cast<size_t>(layer * 2 + kv) * static_cast<size_t>(page_tokens) + static_cast<size_t>(slot)) *
                     static_cast<size_t>(kv_dim) * 2;
    return reinterpret_cast<uint16_t*>(base + off);
  }
};

}  // namespace pg
