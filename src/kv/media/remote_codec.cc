#include "kv/media/remote_codec.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

namespace pg {

RemoteCodec::RemoteCodec(const KvLayout& layout, std::string_view model_identity, std::string secret)
    : record_(kMagic, layout, ModelIdentityHash(model_identity)), secret_(std::move(secret)) {
  key_prefix_ = fmt::format("pgkv:{}:{}:", kFormatVersion, record_.model_hash().Hex().substr(0, 16));
}

std::string RemoteCodec::Key(const BlockHash& hash) const { return key_prefix_ + hash.Hex(); }

std::array<uint8_t, RemoteCodec::kTagBytes> RemoteCodec::Tag(std::string_view key, std::string_view record) const {
  // (key length, key, record): the key is bound, so a valid value cannot be
  // copied under another block's key.
  std::string msg(8, '\0');
  const uint64_t n = key.size();
  std::memcpy(msg.data(), &n, 8);
  msg.append(key);
  msg.append(record);
  std::array<uint8_t, kTagBytes> tag{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), reinterpret_cast<const uint8_t*>(msg.data()),
       msg.size(), tag.data(), &len);
  return tag;
}

bool RemoteCodec::Authentic(std::string_view key, std::string_view value) const {
  if (secret_.empty()) return true;
  if (value.size() != value_bytes()) return false;
  const std::string_view record = value.substr(0, record_.record_bytes());
  const std::array<uint8_t, kTagBytes> want = Tag(key, record);
  return CRYPTO_memcmp(want.data(), value.data() + record.size(), kTagBytes) == 0;
}

std::string RemoteCodec::Encode(const RemoteBlockInfo& info, const uint8_t* data) const {
  std::string v(record_.record_bytes(), '\0');
  record_.Encode(info, data, reinterpret_cast<uint8_t*>(v.data()));
  if (!secret_.empty()) {
    const std::array<uint8_t, kTagBytes> tag = Tag(Key(info.hash), v);
    v.append(reinterpret_cast<const char*>(tag.data()), tag.size());
  }
  return v;
}

Status RemoteCodec::Decode(std::string_view value, const RemoteBlockInfo& expect, uint8_t* dst) const {
  if (value.size() != value_bytes()) {
    return Corrupt(fmt::format("remote block: {} bytes, expected {}", value.size(), value_bytes()));
  }
  const auto* header = reinterpret_cast<const uint8_t*>(value.data());
  const uint8_t* tokens = header + BlockRecord::kHeaderBytes;
  const uint8_t* payload = tokens + record_.token_bytes();
  const Status st = record_.Verify(header, tokens, payload, expect);
  if (!st.ok()) return Corrupt("remote block: " + st.message());
  std::memcpy(dst, payload, record_.payload_bytes());
  return Status::Ok();
}

}  // namespace pg
