// BlockRecord: the self-describing, checksummed record of one KV block, as
// the disk tier stores it in a file and the remote tier stores it in a value.
// The two differ only in the 8-byte magic.
//
// Record layout (little-endian):
//
//   offset  size            field
//   0       8               magic (the store's, e.g. "PGKVBLK\0" or "PGKVRMT\0")
//   8       4               format version (kFormatVersion)
//   12      4               header bytes (kHeaderBytes)
//   16      32              SHA-256 of the model identity
//   48      32              block hash (chained, block_hash.h)
//   80      32              parent hash
//   112     4               depth (block index in its sequence)
//   116     4               token count (= page_tokens)
//   120     4 x 4           n_layers, n_kv_heads, head_dim, dtype
//   136     8               payload bytes (= block_bytes)
//   144     8               body checksum: XXH3-64 of tokens + payload
//   152     8               header checksum: XXH3-64 of bytes [0, 152)
//   160     4 x tokens      tokens (int32)
//   ...     payload bytes   the block, as laid out by KvLayout
//
// A BlockRecord is bound to one magic, one layout and one model: it encodes
// records of those, and verifies that bytes it is handed are an intact record
// of an expected block. The three parts (header, tokens, payload) are passed
// as separate pointers so a reader may place the payload straight into its
// destination.
//
// Thread-safety: immutable after construction; every method is const and may
// run concurrently.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/status.h"
#include "kv/index/block_hash.h"
#include "kv/kv_layout.h"

namespace pg {

// What a record says of its block besides the payload.
struct BlockRecordInfo {
  BlockHash hash;
  BlockHash parent;
  int32_t depth = 0;
  std::span<const int32_t> tokens;  // page_tokens tokens
};

class BlockRecord {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 160;
  using Magic = std::array<char, 8>;

  BlockRecord(const Magic& magic, const KvLayout& layout, const BlockHash& model_hash);

  // SHA-256 of the model identity, as stored at offset 16.
  const BlockHash& model_hash() const { return model_hash_; }
  // Bytes of the tokens part: 4 * page_tokens.
  size_t token_bytes() const { return token_bytes_; }
  // Bytes of the payload part: block_bytes.
  size_t payload_bytes() const { return payload_bytes_; }
  // Bytes of a whole record: header + tokens + payload.
  size_t record_bytes() const { return kHeaderBytes + token_bytes_ + payload_bytes_; }

  // The header of `info` whose payload is `payload` (payload_bytes) into
  // out (kHeaderBytes). info.tokens must hold page_tokens tokens.
  void EncodeHeader(const BlockRecordInfo& info, const uint8_t* payload, uint8_t* out) const;
  // The whole record into out (record_bytes).
  void Encode(const BlockRecordInfo& info, const uint8_t* payload, uint8_t* out) const;

  // Ok when `header` (kHeaderBytes) carries this magic and its header
  // checksum holds; Corrupt otherwise.
  Status CheckIntact(const uint8_t* header) const;
  // Ok when `header` is intact and every field but the body checksum is
  // what this record would write for `expect`: model, layout, version, hash,
  // parent, depth. Corrupt otherwise.
  Status CheckMatches(const uint8_t* header, const BlockRecordInfo& expect) const;
  // CheckMatches, then: tokens (token_bytes, raw little-endian int32) equal
  // expect.tokens and the body checksum holds over tokens + payload. Corrupt
  // naming the first part that disagrees.
  Status Verify(const uint8_t* header, const uint8_t* tokens, const uint8_t* payload,
                const BlockRecordInfo& expect) const;

  // True when an intact header is of this model, format version and layout
  // (token count, shape, dtype, payload bytes); false for another's block.
  bool IsOfThisModelAndLayout(const uint8_t* header) const;

  // Fields of a header; meaningful once CheckIntact passed.
  static BlockHash HashOf(const uint8_t* header);
  static BlockHash ParentOf(const uint8_t* header);
  static int32_t DepthOf(const uint8_t* header);

  // XXH3-64 of tokens then payload, the checksum stored at offset 144.
  static uint64_t BodyChecksum(const void* tokens, size_t token_bytes, const uint8_t* payload, size_t payload_bytes);

 private:
  void EncodeHeaderWithChecksum(const BlockRecordInfo& info, uint64_t body_checksum, uint8_t* out) const;

  Magic magic_;
  KvLayout layout_;
  BlockHash model_hash_;
  size_t token_bytes_;
  size_t payload_bytes_;
};

}  // namespace pg
