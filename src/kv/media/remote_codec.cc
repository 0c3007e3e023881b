#include "kv/media/remote_codec.h"

#include <fmt/format.h>

#include <cstring>

namespace pg {

RemoteCodec::RemoteCodec(const KvLayout& layout, std::string_view model_identity)
    : record_(kMagic, layout, ModelIdentityHash(model_identity)) {
  key_prefix_ = fmt::format("pgkv:{}:{}:", kFormatVersion, record_.model_hash().Hex().substr(0, 16));
}

std::string RemoteCodec::Key(const BlockHash& hash) const { return key_prefix_ + hash.Hex(); }

std::string RemoteCodec::Encode(const RemoteBlockInfo& info, const uint8_t* data) const {
  std::string v(record_.record_bytes(), '\0');
  record_.Encode(info, data, reinterpret_cast<uint8_t*>(v.data()));
  return v;
}

Status RemoteCodec::Decode(std::string_view value, const RemoteBlockInfo& expect, uint8_t* dst) const {
  if (value.size() != record_.record_bytes()) {
    return Corrupt(fmt::format("remote block: {} bytes, expected {}", value.size(), record_.record_bytes()));
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
