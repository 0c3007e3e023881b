#include "kv/index/block_hash.h"

#include <openssl/evp.h>

#include <bit>
#include <vector>

#include "base/check.h"

namespace pg {

namespace {

void AppendU64(std::vector<uint8_t>* buf, uint64_t v) {
  for (int i = 0; i < 8; ++i) buf->push_back(uint8_t(v >> (8 * i)));
}

// OpenSSL 3's one-shot SHA256() looks the algorithm up on every call (about
// a microsecond); keep one fetched digest and one context per thread instead.
const EVP_MD* Sha256Md() {
  static const EVP_MD* md = [] {
    const EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return m != nullptr ? m : EVP_sha256();
  }();
  return md;
}

struct CtxHolder {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~CtxHolder() { EVP_MD_CTX_free(ctx); }
};

EVP_MD_CTX* ThreadCtx() {
  thread_local CtxHolder holder;
  PG_CHECK(holder.ctx != nullptr);
  return holder.ctx;
}

// SHA-256(a | b | c); empty parts are skipped.
BlockHash Sha256Parts(std::span<const uint8_t> a, std::span<const uint8_t> b, std::span<const uint8_t> c = {}) {
  BlockHash h;
  EVP_MD_CTX* ctx = ThreadCtx();
  unsigned len = 0;
  PG_CHECK(EVP_DigestInit_ex(ctx, Sha256Md(), nullptr) == 1);
  for (std::span<const uint8_t> part : {a, b, c}) {
    if (!part.empty()) PG_CHECK(EVP_DigestUpdate(ctx, part.data(), part.size()) == 1);
  }
  PG_CHECK(EVP_DigestFinal_ex(ctx, h.bytes.data(), &len) == 1 && len == 32);
  return h;
}

BlockHash Sha256(const uint8_t* data, size_t n) { return Sha256Parts({data, n}, {}); }

}  // namespace

BlockHashKey::BlockHashKey(std::string_view secret) {
  if (secret.empty()) return;
  keyed_ = true;
  std::array<uint8_t, 64> k{};
  if (secret.size() > k.size()) {
    const BlockHash d = Sha256(reinterpret_cast<const uint8_t*>(secret.data()), secret.size());
    std::memcpy(k.data(), d.bytes.data(), d.bytes.size());
  } else {
    std::memcpy(k.data(), secret.data(), secret.size());
  }
  for (size_t i = 0; i < k.size(); ++i) {
    inner_pad_[i] = uint8_t(k[i] ^ 0x36);
    outer_pad_[i] = uint8_t(k[i] ^ 0x5c);
  }
}

BlockHash BlockHashKey::Digest(std::span<const uint8_t> a, std::span<const uint8_t> b) const {
  if (!keyed_) return Sha256Parts(a, b);
  const BlockHash inner = Sha256Parts(inner_pad_, a, b);
  return Sha256Parts(outer_pad_, inner.bytes);
}

bool BlockHash::IsZero() const {
  for (uint8_t b : bytes)
    if (b) return false;
  return true;
}

std::string BlockHash::Hex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(64, '0');
  for (size_t i = 0; i < 32; ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

Result<BlockHash> BlockHash::FromHex(std::string_view hex) {
  if (hex.size() != 64) return InvalidArgument("block hash: expected 64 hex digits");
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  BlockHash h;
  for (size_t i = 0; i < 32; ++i) {
    int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("block hash: not lowercase hex");
    h.bytes[i] = uint8_t(hi << 4 | lo);
  }
  return h;
}

BlockHash ModelIdentityHash(std::string_view model_identity) {
  return Sha256(reinterpret_cast<const uint8_t*>(model_identity.data()), model_identity.size());
}

BlockHash RootHash(std::string_view model_identity, std::string_view cache_salt, const BlockHashKey& key) {
  static constexpr std::string_view kTag = "pgkv-root-1";
  std::vector<uint8_t> buf(kTag.begin(), kTag.end());
  AppendU64(&buf, model_identity.size());
  buf.insert(buf.end(), model_identity.begin(), model_identity.end());
  AppendU64(&buf, cache_salt.size());
  buf.insert(buf.end(), cache_salt.begin(), cache_salt.end());
  return key.Digest(buf);
}

BlockHash ChainHash(const BlockHash& parent, std::span<const int32_t> tokens, const BlockHashKey& key) {
  // Little-endian hosts only (x86-64, aarch64): tokens are hashed as laid out.
  static_assert(std::endian::native == std::endian::little);
  return key.Digest(parent.bytes, {reinterpret_cast<const uint8_t*>(tokens.data()), 4 * tokens.size()});
}

}  // namespace pg
