// BlockHash: the key of a full block in the prefix index.
//
// A chained SHA-256 (OpenSSL):
//   root      = SHA-256("pgkv-root-1" | len | model_identity | len | cache_salt)
//   hash(b_i) = SHA-256(hash(b_{i-1}) | tokens of b_i as little-endian int32)
// with hash(b_{-1}) = root. So a block's hash names the whole token prefix up
// to and including it, for one model and one salt. The index still compares
// the stored tokens on every hit. Value type; thread-safe.
//
// Keyed (a BlockHashKey made from the fleet secret, --kv-hash-secret-file or
// PROSGROW_KV_HASH_SECRET): every SHA-256 above, the root's and each block's,
// is HMAC-SHA256 under the secret over the same bytes. Whoever lacks the
// secret can then neither recompute a guessed prompt's hashes nor extend a
// hash they saw (on KV events, in Redis key names, in disk file names) by a
// guessed next block. Replicas that share the secret share blocks. Unkeyed
// (no secret, the default), the hashes are the plain chain above.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pg {

struct BlockHash {
  std::array<uint8_t, 32> bytes{};

  bool operator==(const BlockHash&) const = default;
  bool IsZero() const;
  // 64 lowercase hex digits.
  std::string Hex() const;
  static Result<BlockHash> FromHex(std::string_view hex);
};

struct BlockHashHasher {
  size_t operator()(const BlockHash& h) const {
    size_t v;
    std::memcpy(&v, h.bytes.data(), sizeof(v));
    return v;
  }
};

// The key of keyed block hashes: HMAC-SHA256's inner and outer pads of the
// secret (a secret over 64 bytes is hashed first, as HMAC does). The
// default-constructed key is unkeyed: Digest is plain SHA-256. Value type;
// thread-safe (Digest uses a per-thread context).
class BlockHashKey {
 public:
  BlockHashKey() = default;
  // An empty secret is unkeyed.
  explicit BlockHashKey(std::string_view secret);
  bool keyed() const { return keyed_; }
  // HMAC-SHA256(secret, a | b) when keyed, else SHA-256(a | b).
  BlockHash Digest(std::span<const uint8_t> a, std::span<const uint8_t> b = {}) const;

 private:
  std::array<uint8_t, 64> inner_pad_{};
  std::array<uint8_t, 64> outer_pad_{};
  bool keyed_ = false;
};

// SHA-256 of the model identity alone (stored in disk block headers).
BlockHash ModelIdentityHash(std::string_view model_identity);
// Hash of the empty prefix for (model, salt), under `key` (unkeyed by default).
BlockHash RootHash(std::string_view model_identity, std::string_view cache_salt, const BlockHashKey& key = {});
// Hash of a block given its parent's hash and its tokens, under `key`.
BlockHash ChainHash(const BlockHash& parent, std::span<const int32_t> tokens, const BlockHashKey& key = {});

}  // namespace pg
