#include "kv/remote_codec.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <fmt/format.h>

#include <cstring>

#include "base/check.h"

namespace pg {

namespace {

constexpr char kMagic[8] = {'P', 'G', 'K', 'V', 'R', 'M', 'T', '\0'};
constexpr size_t kChecksumOffset = 144;
constexpr size_t kHeaderChecksumOffset = 152;

void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint64_t GetU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t BodyChecksum(std::span<const int32_t> tokens, const uint8_t* data, size_t bytes) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, tokens.data(), 4 * tokens.size());
  XXH3_64bits_update(&st, data, bytes);
  return XXH3_64bits_digest(&st);
}

}  // namespace

RemoteCodec::RemoteCodec(const KvLayout& layout, std::string_view model_identity)
    : layout_(layout), model_hash_(ModelIdentityHash(model_identity)) {
  key_prefix_ = fmt::format("pgkv:{}:{}:", kFormatVersion, model_hash_.Hex().substr(0, 16));
  value_bytes_ = kHeaderBytes + 4 * size_t(layout.page_tokens) + layout.block_bytes();
}

std::string RemoteCodec::Key(const BlockHash& hash) const { return key_prefix_ + hash.Hex(); }

void RemoteCodec::EncodeHeader(const RemoteBlockInfo& info, uint64_t checksum, uint8_t* h) const {
  std::memset(h, 0, kHeaderBytes);
  std::memcpy(h, kMagic, 8);
  PutU32(h + 8, kFormatVersion);
  PutU32(h + 12, uint32_t(kHeaderBytes));
  std::memcpy(h + 16, model_hash_.bytes.data(), 32);
  std::memcpy(h + 48, info.hash.bytes.data(), 32);
  std::memcpy(h + 80, info.parent.bytes.data(), 32);
  PutU32(h + 112, uint32_t(info.depth));
  PutU32(h + 116, uint32_t(layout_.page_tokens));
  PutU32(h + 120, uint32_t(layout_.n_layers));
  PutU32(h + 124, uint32_t(layout_.n_kv_heads));
  PutU32(h + 128, uint32_t(layout_.head_dim));
  PutU32(h + 132, uint32_t(layout_.dtype));
  PutU64(h + 136, layout_.block_bytes());
  PutU64(h + kChecksumOffset, checksum);
  PutU64(h + kHeaderChecksumOffset, XXH3_64bits(h, kHeaderChecksumOffset));
}

std::string RemoteCodec::Encode(const RemoteBlockInfo& info, const uint8_t* data) const {
  PG_CHECK(info.tokens.size() == size_t(layout_.page_tokens));
  std::string v(value_bytes_, '\0');
  auto* out = reinterpret_cast<uint8_t*>(v.data());
  EncodeHeader(info, BodyChecksum(info.tokens, data, layout_.block_bytes()), out);
  std::memcpy(out + kHeaderBytes, info.tokens.data(), 4 * info.tokens.size());
  std::memcpy(out + kHeaderBytes + 4 * info.tokens.size(), data, layout_.block_bytes());
  return v;
}

Status RemoteCodec::Decode(std::string_view value, const RemoteBlockInfo& expect, uint8_t* dst) const {
  if (value.size() != value_bytes_) return Corrupt(fmt::format("remote block: {} bytes, expected {}", value.size(), value_bytes_));
  if (expect.tokens.size() != size_t(layout_.page_tokens)) return Corrupt("remote block: token count");
  const auto* v = reinterpret_cast<const uint8_t*>(value.data());
  if (std::memcmp(v, kMagic, 8) != 0) return Corrupt("remote block: bad magic");
  if (GetU64(v + kHeaderChecksumOffset) != XXH3_64bits(v, kHeaderChecksumOffset))
    return Corrupt("remote block: header checksum mismatch");
  uint8_t want[kHeaderBytes];
  EncodeHeader(expect, GetU64(v + kChecksumOffset), want);
  if (std::memcmp(v, want, kHeaderBytes) != 0)
    return Corrupt("remote block: header does not match the block (identity, hash, parent, depth or layout)");
  const size_t token_bytes = 4 * expect.tokens.size();
  if (std::memcmp(v + kHeaderBytes, expect.tokens.data(), token_bytes) != 0) return Corrupt("remote block: tokens differ");
  const uint8_t* payload = v + kHeaderBytes + token_bytes;
  if (BodyChecksum(expect.tokens, payload, layout_.block_bytes()) != GetU64(v + kChecksumOffset))
    return Corrupt("remote block: checksum mismatch");
  std::memcpy(dst, payload, layout_.block_bytes());
  return Status::Ok();
}

}  // namespace pg
