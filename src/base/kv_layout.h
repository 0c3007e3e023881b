// KvLayout: the byte layout of one KV block, the one type that the forward
// pass (src/model: KvPages reads and writes K/V rows through it) and the
// tiered cache (src/kv: moves whole blocks, names them on disk) share. It
// sits in base because model and kv both depend on base and never on each
// other. Value type; thread-safe.
//
// One block holds one page of `page_tokens` token slots for ALL layers, K and V:
//
//   block = [layer 0: K[page_tokens][n_kv_heads*head_dim] V[page_tokens][n_kv_heads*head_dim]]
//           [layer 1: K ...                               V ...                              ]
//           ...
//
// Elements are 2 bytes (f16 or bf16). Token slot s of layer l's K starts at
//   block_base + offset(l, 0) + s * row_bytes()
// and of its V at offset(l, 1) + s * row_bytes().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace pg {

enum class KvDtype : uint8_t { kF16 = 1, kBF16 = 2 };

const char* KvDtypeName(KvDtype dtype);

struct KvLayout {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int page_tokens = 16;
  KvDtype dtype = KvDtype::kF16;

  // Elements of one token's K (or V) row in one layer: n_kv_heads * head_dim.
  int64_t kv_dim() const { return int64_t(n_kv_heads) * head_dim; }
  // Bytes of one token's K (or V) row in one layer: kv_dim() * 2.
  size_t row_bytes() const { return size_t(n_kv_heads) * size_t(head_dim) * 2; }
  // Bytes of one block: n_layers * 2 * page_tokens * row_bytes().
  size_t block_bytes() const { return size_t(n_layers) * 2 * size_t(page_tokens) * row_bytes(); }
  // Byte offset in a block of layer `layer`'s K (kv = 0) or V (kv = 1) page.
  size_t offset(int64_t layer, int kv) const {
    return (size_t(layer) * 2 + size_t(kv)) * size_t(page_tokens) * row_bytes();
  }

  // Ok when every field is positive and the block is below 1 GiB.
  Status Validate() const;
  std::string ToString() const;
  bool operator==(const KvLayout&) const = default;
};

}  // namespace pg
