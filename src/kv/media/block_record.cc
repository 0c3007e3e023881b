#include "kv/media/block_record.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cstring>

#include "base/check.h"

namespace pg {

namespace {

// Offsets of the header fields (see the table in block_record.h).
constexpr size_t kVersionOffset = 8;
constexpr size_t kHeaderBytesOffset = 12;
constexpr size_t kModelOffset = 16;
constexpr size_t kHashOffset = 48;
constexpr size_t kParentOffset = 80;
constexpr size_t kDepthOffset = 112;
constexpr size_t kTokenCountOffset = 116;
constexpr size_t kLayersOffset = 120;
constexpr size_t kKvHeadsOffset = 124;
constexpr size_t kHeadDimOffset = 128;
constexpr size_t kDtypeOffset = 132;
constexpr size_t kPayloadBytesOffset = 136;
constexpr size_t kBodyChecksumOffset = 144;
constexpr size_t kHeaderChecksumOffset = 152;
static_assert(kHeaderChecksumOffset + 8 == BlockRecord::kHeaderBytes);

void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
BlockHash GetHash(const uint8_t* p) {
  BlockHash h;
  std::memcpy(h.bytes.data(), p, 32);
  return h;
}

}  // namespace

BlockRecord::BlockRecord(const Magic& magic, const KvLayout& layout, const BlockHash& model_hash)
    : magic_(magic),
      layout_(layout),
      model_hash_(model_hash),
      token_bytes_(4 * size_t(layout.page_tokens)),
      payload_bytes_(layout.block_bytes()) {}

uint64_t BlockRecord::BodyChecksum(const void* tokens, size_t token_bytes, const uint8_t* payload,
                                   size_t payload_bytes) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, tokens, token_bytes);
  XXH3_64bits_update(&st, payload, payload_bytes);
  return XXH3_64bits_digest(&st);
}

void BlockRecord::EncodeHeaderWithChecksum(const BlockRecordInfo& info, uint64_t body_checksum, uint8_t* h) const {
  std::memset(h, 0, kHeaderBytes);
  std::memcpy(h, magic_.data(), magic_.size());
  PutU32(h + kVersionOffset, kFormatVersion);
  PutU32(h + kHeaderBytesOffset, uint32_t(kHeaderBytes));
  std::memcpy(h + kModelOffset, model_hash_.bytes.data(), 32);
  std::memcpy(h + kHashOffset, info.hash.bytes.data(), 32);
  std::memcpy(h + kParentOffset, info.parent.bytes.data(), 32);
  PutU32(h + kDepthOffset, uint32_t(info.depth));
  PutU32(h + kTokenCountOffset, uint32_t(layout_.page_tokens));
  PutU32(h + kLayersOffset, uint32_t(layout_.n_layers));
  PutU32(h + kKvHeadsOffset, uint32_t(layout_.n_kv_heads));
  PutU32(h + kHeadDimOffset, uint32_t(layout_.head_dim));
  PutU32(h + kDtypeOffset, uint32_t(layout_.dtype));
  PutU64(h + kPayloadBytesOffset, payload_bytes_);
  PutU64(h + kBodyChecksumOffset, body_checksum);
  PutU64(h + kHeaderChecksumOffset, XXH3_64bits(h, kHeaderChecksumOffset));
}

void BlockRecord::EncodeHeader(const BlockRecordInfo& info, const uint8_t* payload, uint8_t* out) const {
  PG_CHECK(info.tokens.size() == size_t(layout_.page_tokens));
  EncodeHeaderWithChecksum(info, BodyChecksum(info.tokens.data(), token_bytes_, payload, payload_bytes_), out);
}

void BlockRecord::Encode(const BlockRecordInfo& info, const uint8_t* payload, uint8_t* out) const {
  EncodeHeader(info, payload, out);
  std::memcpy(out + kHeaderBytes, info.tokens.data(), token_bytes_);
  std::memcpy(out + kHeaderBytes + token_bytes_, payload, payload_bytes_);
}

Status BlockRecord::CheckIntact(const uint8_t* header) const {
  if (std::memcmp(header, magic_.data(), magic_.size()) != 0) return Corrupt("bad magic");
  if (GetU64(header + kHeaderChecksumOffset) != XXH3_64bits(header, kHeaderChecksumOffset)) {
    return Corrupt("header checksum mismatch");
  }
  return Status::Ok();
}

Status BlockRecord::CheckMatches(const uint8_t* header, const BlockRecordInfo& expect) const {
  PG_RETURN_IF_ERROR(CheckIntact(header));
  uint8_t want[kHeaderBytes];
  EncodeHeaderWithChecksum(expect, GetU64(header + kBodyChecksumOffset), want);
  if (std::memcmp(header, want, kHeaderBytes) != 0) {
    return Corrupt("header does not match the block (identity, hash, parent, depth or layout)");
  }
  return Status::Ok();
}

Status BlockRecord::Verify(const uint8_t* header, const uint8_t* tokens, const uint8_t* payload,
                           const BlockRecordInfo& expect) const {
  if (expect.tokens.size() != size_t(layout_.page_tokens)) return Corrupt("token count");
  PG_RETURN_IF_ERROR(CheckMatches(header, expect));
  if (std::memcmp(tokens, expect.tokens.data(), token_bytes_) != 0) return Corrupt("tokens differ");
  if (BodyChecksum(tokens, token_bytes_, payload, payload_bytes_) != GetU64(header + kBodyChecksumOffset)) {
    return Corrupt("checksum mismatch");
  }
  return Status::Ok();
}

bool BlockRecord::IsOfThisModelAndLayout(const uint8_t* h) const {
  return GetHash(h + kModelOffset) == model_hash_ && GetU32(h + kVersionOffset) == kFormatVersion &&
         GetU32(h + kTokenCountOffset) == uint32_t(layout_.page_tokens) &&
         GetU32(h + kLayersOffset) == uint32_t(layout_.n_layers) &&
         GetU32(h + kKvHeadsOffset) == uint32_t(layout_.n_kv_heads) &&
         GetU32(h + kHeadDimOffset) == uint32_t(layout_.head_dim) &&
         GetU32(h + kDtypeOffset) == uint32_t(layout_.dtype) && GetU64(h + kPayloadBytesOffset) == payload_bytes_;
}

BlockHash BlockRecord::HashOf(const uint8_t* header) { return GetHash(header + kHashOffset); }
BlockHash BlockRecord::ParentOf(const uint8_t* header) { return GetHash(header + kParentOffset); }
int32_t BlockRecord::DepthOf(const uint8_t* header) { return int32_t(GetU32(header + kDepthOffset)); }

}  // namespace pg
