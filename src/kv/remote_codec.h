// RemoteCodec: the key and value of one KV block in the remote tier.
//
// Key: "pgkv:1:<model digest>:<block hash>" where the model digest is the
// first 16 hex digits of SHA-256(model identity) and the block hash is the
// chained hash (64 hex digits) that the prefix index and the disk tier use.
// No hash tag: in Redis Cluster the blocks spread over the slots.
//
// Value (little-endian), the disk tier's header with its own magic:
//
//   offset  size            field
//   0       8               magic "PGKVRMT\0"
//   8       4               format version (1)
//   12      4               header bytes (kHeaderBytes)
//   16      32              SHA-256 of the model identity
//   48      32              block hash
//   80      32              parent hash
//   112     4               depth (block index in its sequence)
//   116     4               token count (= page_tokens)
//   120     4 x 4           n_layers, n_kv_heads, head_dim, dtype
//   136     8               payload bytes (= block_bytes)
//   144     8               XXH3-64 of tokens + payload
//   152     8               XXH3-64 of bytes [0, 152)
//   160     4 x tokens      tokens (int32)
//   ...     payload bytes   the block, as laid out by KvLayout
//
// A value that disagrees with what the reader expects in any field (size,
// identity, hash, parent, depth, layout, tokens, either checksum) is Corrupt.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kv/block_hash.h"
#include "kv/kv_layout.h"

namespace pg {

// What the value says of its block besides the payload.
struct RemoteBlockInfo {
  BlockHash hash;
  BlockHash parent;
  int32_t depth = 0;
  std::span<const int32_t> tokens;  // page_tokens tokens
};

class RemoteCodec {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 160;

  RemoteCodec(const KvLayout& layout, std::string_view model_identity);

  std::string Key(const BlockHash& hash) const;
  // Bytes of one value (header + tokens + payload).
  size_t value_bytes() const { return value_bytes_; }
  // The value of a block (data: block_bytes).
  std::string Encode(const RemoteBlockInfo& info, const uint8_t* data) const;
  // Verifies `value` against `expect` and copies its payload into dst
  // (block_bytes). Corrupt naming the first field that disagrees.
  Status Decode(std::string_view value, const RemoteBlockInfo& expect, uint8_t* dst) const;

 private:
  void EncodeHeader(const RemoteBlockInfo& info, uint64_t checksum, uint8_t* out) const;

  KvLayout layout_;
  BlockHash model_hash_;
  std::string key_prefix_;
  size_t value_bytes_;
};

}  // namespace pg
