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

BlockHash Sha256Parts(const uint8_t* a, size_t na, const uint8_t* b, size_t nb) {
  BlockHash h;
  EVP_MD_CTX* ctx = ThreadCtx();
  unsigned len = 0;
  PG_CHECK(EVP_DigestInit_ex(ctx, Sha256Md(), nullptr) == 1);
  PG_CHECK(EVP_DigestUpdate(ctx, a, na) == 1);
  if (nb > 0) PG_CHECK(EVP_DigestUpdate(ctx, b, nb) == 1);
  PG_CHECK(EVP_DigestFinal_ex(ctx, h.bytes.data(), &len) == 1 && len == 32);
  return h;
}

BlockHash Sha256(const uint8_t* data, size_t n) { return Sha256Parts(data, n, nullptr, 0); }

}  // namespace

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

BlockHash RootHash(std::string_view model_identity, std::string_view cache_salt) {
  static constexpr std::string_view kTag = "pgkv-root-1";
  std::vector<uint8_t> buf(kTag.begin(), kTag.end());
  AppendU64(&buf, model_identity.size());
  buf.insert(buf.end(), model_identity.begin(), model_identity.end());
  AppendU64(&buf, cache_salt.size());
  buf.insert(buf.end(), cache_salt.begin(), cache_salt.end());
  return Sha256(buf.data(), buf.size());
}

BlockHash ChainHash(const BlockHash& parent, std::span<const int32_t> tokens) {
  // Little-endian hosts only (x86-64, aarch64): tokens are hashed as laid out.
  static_assert(std::endian::native == std::endian::little);
  return Sha256Parts(parent.bytes.data(), 32, reinterpret_cast<const uint8_t*>(tokens.data()), 4 * tokens.size());
}

}  // namespace pg
