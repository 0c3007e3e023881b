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
// Elements are 2 bytes (f16 or bf16; MLA layouts may also be f32, 4 bytes). Token slot s of layer l's K starts at
//   block_base + offset(l, 0) + s * row_bytes()
// and of its V at offset(l, 1) + s * row_bytes().
//
// Multi-head latent attention (kind kMla: deepseek2, glm-dsa) caches no
// per-head K/V. Each token has ONE latent row per layer (the normalised
// kv LoRA latent followed by the roped key part; head_dim = kv_lora + rope,
// n_kv_heads = 1; V is a view of its first kv_lora elements), and the
// DeepSeek sparse attention indexer adds, for each of the n_index_layers
// layers that run an indexer, the token's indexer key (index_dim elements).
// Both live in the same block, so every tier moves them together:
//
//   block = [latent[page_tokens][head_dim] of layer 0] ... [of layer n_layers-1]
//           [index keys[page_tokens][index_dim] of indexer layer 0] ... [n_index_layers-1]
//
//   latent row: offset(l, 0) + s * row_bytes();  index key: index_offset(i) + s * index_row_bytes()
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace pg {

// kF32 (4 bytes) only for MLA layouts: `--attn precise` caches the latent
// rows unrounded (f16 rounding of a latent row moves logits by up to 0.08
// on the deepseek2 fixture).
enum class KvDtype : uint8_t { kF16 = 1, kBF16 = 2, kF32 = 3 };

inline size_t KvElemBytes(KvDtype dtype) { return dtype == KvDtype::kF32 ? 4 : 2; }

// What a token caches per layer: K and V rows (kMha, also GQA/MQA) or one
// MLA latent row (kMla).
enum class AttentionKind : uint8_t { kMha = 0, kMla = 1 };

const char* AttentionKindName(AttentionKind kind);

const char* KvDtypeName(KvDtype dtype);

struct KvLayout {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int page_tokens = 16;
  KvDtype dtype = KvDtype::kF16;
  AttentionKind kind = AttentionKind::kMha;
  int n_index_layers = 0;  // kMla: layers with an indexer key cache
  int index_dim = 0;       // kMla: elements of one indexer key

  // Elements of one token's K (or V, or MLA latent) row in one layer: n_kv_heads * head_dim.
  int64_t kv_dim() const { return int64_t(n_kv_heads) * head_dim; }
  // Bytes of one token's K (or V, or latent) row in one layer: kv_dim() * element bytes.
  size_t row_bytes() const { return size_t(n_kv_heads) * size_t(head_dim) * KvElemBytes(dtype); }
  // Rows per token per layer: 2 (K, V) or 1 (the MLA latent).
  size_t rows_per_layer() const { return kind == AttentionKind::kMla ? 1 : 2; }
  size_t index_row_bytes() const { return size_t(index_dim) * KvElemBytes(dtype); }
  // Bytes one token occupies in a block (all layers, indexer keys included).
  size_t token_bytes() const {
    return size_t(n_layers) * rows_per_layer() * row_bytes() + size_t(n_index_layers) * index_row_bytes();
  }
  // Bytes of one block: page_tokens * token_bytes().
  size_t block_bytes() const { return size_t(page_tokens) * token_bytes(); }
  // Byte offset in a block of layer `layer`'s K (kv = 0) or V (kv = 1) page
  // (kMla: kv = 0, the latent page).
  size_t offset(int64_t layer, int kv) const {
    return (size_t(layer) * rows_per_layer() + size_t(kv)) * size_t(page_tokens) * row_bytes();
  }
  // Byte offset of indexer layer `i`'s key page (kMla with n_index_layers > i).
  size_t index_offset(int64_t i) const {
    return size_t(n_layers) * size_t(page_tokens) * row_bytes() + size_t(i) * size_t(page_tokens) * index_row_bytes();
  }

  // Ok when every field is positive and the block is below 1 GiB.
  Status Validate() const;
  std::string ToString() const;
  bool operator==(const KvLayout&) const = default;
};

}  // namespace pg
