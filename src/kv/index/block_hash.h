// BlockHash: the key of a full block in the prefix index.
//
// A chained SHA-256 (OpenSSL):
//   root      = SHA-256("pgkv-root-1" | len | model_identity | len | cache_salt)
//   hash(b_i) = SHA-256(hash(b_{i-1}) | tokens of b_i as little-endian int32)
// with hash(b_{-1}) = root. So a block's hash names the whole token prefix up
// to and including it, for one model and one salt. The index still compares
// the stored tokens on every hit. Value type; thread-safe.
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

// SHA-256 of the model identity alone (stored in disk block headers).
BlockHash ModelIdentityHash(std::string_view model_identity);
// Hash of the empty prefix for (model, salt).
BlockHash RootHash(std::string_view model_identity, std::string_view cache_salt);
// Hash of a block given its parent's hash and its tokens.
BlockHash ChainHash(const BlockHash& parent, std::span<const int32_t> tokens);

}  // namespace pg
