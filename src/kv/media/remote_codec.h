// RemoteCodec: the key and value of one KV block in the remote tier.
//
// Key: "pgkv:1:<model digest>:<block hash>" where the model digest is the
// first 16 hex digits of SHA-256(model identity) and the block hash is the
// chained hash (64 hex digits) that the prefix index and the disk tier use.
// No hash tag: in Redis Cluster the blocks spread over the slots.
//
// Value: a BlockRecord (block_record.h, which gives the byte layout) with
// the magic "PGKVRMT\0": header, tokens, payload, as one string.
//
// With a secret (--kv-remote-secret-file) the value is followed by a 32-byte
// HMAC-SHA256 under the secret over (key length, key, record): whoever can
// write to Redis but does not hold the secret cannot plant a block that a
// replica serves. Authentic() checks it (in constant time) before Decode.
// Without a secret there is no tag, and the tier trusts every writer.
//
// A value that disagrees with what the reader expects in any field (size,
// identity, hash, parent, depth, layout, tokens, either checksum) is Corrupt.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kv/index/block_hash.h"
#include "kv/kv_layout.h"
#include "kv/media/block_record.h"

namespace pg {

// What the value says of its block besides the payload.
using RemoteBlockInfo = BlockRecordInfo;

class RemoteCodec {
 public:
  static constexpr uint32_t kFormatVersion = BlockRecord::kFormatVersion;
  static constexpr size_t kHeaderBytes = BlockRecord::kHeaderBytes;
  static constexpr BlockRecord::Magic kMagic = {'P', 'G', 'K', 'V', 'R', 'M', 'T', '\0'};

  static constexpr size_t kTagBytes = 32;  // HMAC-SHA256

  // `secret`: the HMAC key; "" = no tag.
  RemoteCodec(const KvLayout& layout, std::string_view model_identity, std::string secret = "");

  std::string Key(const BlockHash& hash) const;
  // Bytes of one value (header + tokens + payload, + tag with a secret).
  size_t value_bytes() const { return record_.record_bytes() + (secret_.empty() ? 0 : kTagBytes); }
  bool authenticated() const { return !secret_.empty(); }
  // False when a secret is set and `value` (stored under `key`) does not
  // carry its valid tag. Always true without a secret.
  bool Authentic(std::string_view key, std::string_view value) const;
  // The value of a block (data: block_bytes).
  std::string Encode(const RemoteBlockInfo& info, const uint8_t* data) const;
  // Verifies `value` against `expect` and copies its payload into dst
  // (block_bytes). Corrupt naming the first field that disagrees.
  Status Decode(std::string_view value, const RemoteBlockInfo& expect, uint8_t* dst) const;

 private:
  BlockRecord record_;
  std::string key_prefix_;
  std::string secret_;
  // The tag of `record` stored under `key`.
  std::array<uint8_t, kTagBytes> Tag(std::string_view key, std::string_view record) const;
};

}  // namespace pg
