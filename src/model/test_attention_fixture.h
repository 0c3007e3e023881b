// AttentionFixture: for the attention tests, a sequence of n_keys random K/V
// rows in scattered pages (as the paged cache produces) and n_q random query
// vectors, with AttentionArgs for the last KV head of layer 1.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/fp16.h"
#include "model/attention.h"
#include "model/kv_pages.h"

namespace pg {

struct AttentionFixture {
  AttentionFixture(int64_t head_dim, int64_t n_kv_heads, int64_t n_keys, int64_t page_tokens, KvDtype type,
                   uint32_t seed, float sd, int64_t n_q) {
    kv.layout =
        KvLayout{2, static_cast<int>(n_kv_heads), static_cast<int>(head_dim), static_cast<int>(page_tokens), type};
    kv.block_bytes = kv.layout.block_bytes();
    const int64_t n_blocks = (n_keys + page_tokens - 1) / page_tokens;
    mem.resize(kv.block_bytes * static_cast<size_t>(n_blocks + 3));
    kv.base = mem.data();
    for (int64_t b = 0; b < n_blocks; ++b) table.push_back(static_cast<int32_t>((b * 7 + 2) % (n_blocks + 3)));
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, sd);
    for (int64_t j = 0; j < n_keys; ++j)
      for (int kvv = 0; kvv < 2; ++kvv) {
        uint16_t* row = kv.Row(table[j / page_tokens], 1, kvv, j % page_tokens);
        for (int64_t d = 0; d < kv.kv_dim(); ++d)
          row[d] = type == KvDtype::kF16 ? F32ToF16(nd(rng)) : F32ToBF16(nd(rng));
      }
    q.resize(static_cast<size_t>(n_q * head_dim));
    for (auto& x : q) x = nd(rng);
    args.kv = &kv;
    args.block_table = table.data();
    args.layer = 1;
    args.kv_head = n_kv_heads - 1;
    args.head_dim = head_dim;
    args.n_keys = n_keys;
    args.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  }
  const float* Q(int64_t i) const { return q.data() + i * args.head_dim; }

  KvPages kv;
  std::vector<uint8_t> mem;
  std::vector<int32_t> table;
  std::vector<float> q;  // (n_q, head_dim)
  AttentionArgs args;
};

}  // namespace pg
