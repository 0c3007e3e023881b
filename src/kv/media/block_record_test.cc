#include "kv/media/block_record.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kv/kv_test_util.h"
#include "kv/media/disk_tier.h"
#include "kv/media/remote_codec.h"

namespace pg {
namespace {

constexpr BlockRecord::Magic kDiskMagic = {'P', 'G', 'K', 'V', 'B', 'L', 'K', '\0'};
constexpr BlockRecord::Magic kRemoteMagic = {'P', 'G', 'K', 'V', 'R', 'M', 'T', '\0'};

// The golden block: a 16-byte payload, so the whole record fits on a screen.
struct Golden {
  KvLayout layout{1, 1, 2, 2, KvDtype::kF16};
  std::string model = "golden-model";
  std::vector<int32_t> tokens{11, -2};
  BlockHash parent = RootHash(model, "");
  BlockHash hash = ChainHash(parent, tokens);
  std::vector<uint8_t> payload = Payload();
  BlockRecordInfo info() const { return BlockRecordInfo{hash, parent, 3, tokens}; }
  BlockRecord Record(const BlockRecord::Magic& magic) const { return {magic, layout, ModelIdentityHash(model)}; }
  // The whole record of this block under `magic`.
  std::vector<uint8_t> Encode(const BlockRecord::Magic& magic) const {
    const BlockRecord record = Record(magic);
    std::vector<uint8_t> out(record.record_bytes());
    record.Encode(info(), payload.data(), out.data());
    return out;
  }
  static std::vector<uint8_t> Payload() {
    std::vector<uint8_t> p(16);
    for (size_t i = 0; i < p.size(); ++i) p[i] = uint8_t(i * 37 + 5);
    return p;
  }
};

// Bytes of the golden block as the disk tier and the remote codec wrote them
// BEFORE BlockRecord existed (captured from disk_tier.cc / remote_codec.cc at
// 46d06aa). Only the magic and hence the header checksum differ.
std::string GoldenHex(const char* magic, const char* header_checksum) {
  return std::string(magic) +
         "01000000"                                                          // format version 1
         "a0000000"                                                          // header bytes 160
         "2c68f21a6e2c7fab9ec496809b43ef8b613e586b0ebb0b90e69aba3748f51812"  // SHA-256("golden-model")
         "071552ee4bc38f9253df5c0bbd78795837e6e893c48a0ec6462e5cf1e0c3a1c1"  // block hash
         "908997c744dbfd96dc87b8761953f9b9da212022390eb3d39bb18ac3f848ff70"  // parent hash
         "03000000"                                                          // depth 3
         "02000000"                                                          // token count 2
         "01000000010000000200000001000000"   // n_layers 1, n_kv_heads 1, head_dim 2, dtype f16
         "1000000000000000"                   // payload bytes 16
         "b1e6d4a4c41e5591"                   // body checksum
         + header_checksum +                  // header checksum
         "0b000000feffffff"                   // tokens {11, -2}
         "052a4f7499bee3082d52779cc1e60b30";  // payload
}
const std::string kDiskGolden = GoldenHex("50474b56424c4b00", "758f9868db981352");
const std::string kRemoteGolden = GoldenHex("50474b56524d5400", "292382475bbb34b3");

std::string Hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}
std::string Hex(const std::string& s) { return Hex(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = uint8_t(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

Status VerifyWhole(const BlockRecord& record, const std::vector<uint8_t>& r, const BlockRecordInfo& expect) {
  const uint8_t* tokens = r.data() + BlockRecord::kHeaderBytes;
  return record.Verify(r.data(), tokens, tokens + record.token_bytes(), expect);
}

TEST(BlockRecordTest, EncodesTheGoldenBytes) {
  const Golden g;
  const std::vector<uint8_t> disk = g.Encode(kDiskMagic), remote = g.Encode(kRemoteMagic);
  EXPECT_EQ(Hex(disk.data(), disk.size()), kDiskGolden);
  EXPECT_EQ(Hex(remote.data(), remote.size()), kRemoteGolden);
}

// The tiers' bytes are the golden ones, and golden bytes written before the
// refactor still read back through the tiers.
TEST(BlockRecordTest, DiskTierFilesKeepTheirBytes) {
  Golden g;
  kvtest::TempDir dir;
  auto disk = DiskTier::Open(dir.path(), g.layout, g.model);
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  ASSERT_TRUE((*disk)->Write(DiskTier::BlockInfo{g.hash, g.parent, 3, g.tokens}, g.payload.data()).ok());
  std::ifstream in((*disk)->PathFor(g.hash), std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(Hex(file), kDiskGolden);

  const std::vector<uint8_t> golden = FromHex(kDiskGolden);
  std::ofstream(((*disk)->PathFor(g.hash)), std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(golden.data()), std::streamsize(golden.size()));
  std::vector<uint8_t> got(g.payload.size());
  ASSERT_TRUE((*disk)->Read(g.hash, g.tokens, got.data()).ok());
  EXPECT_EQ(got, g.payload);
  auto scan = (*disk)->Scan();
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->blocks.size(), 1u);
  EXPECT_EQ(scan->blocks[0].parent, g.parent);
  EXPECT_EQ(scan->blocks[0].depth, 3);
  EXPECT_EQ(scan->blocks[0].tokens, g.tokens);
}

TEST(BlockRecordTest, RemoteValuesKeepTheirBytes) {
  Golden g;
  RemoteCodec codec(g.layout, g.model);
  EXPECT_EQ(Hex(codec.Encode(g.info(), g.payload.data())), kRemoteGolden);
  const std::vector<uint8_t> golden = FromHex(kRemoteGolden);
  std::vector<uint8_t> got(g.payload.size());
  const std::string_view value(reinterpret_cast<const char*>(golden.data()), golden.size());
  ASSERT_TRUE(codec.Decode(value, g.info(), got.data()).ok());
  EXPECT_EQ(got, g.payload);
}

TEST(BlockRecordTest, HeaderFieldsAndOwnership) {
  const Golden g;
  const BlockRecord record = g.Record(kRemoteMagic);
  EXPECT_EQ(record.token_bytes(), 8u);
  EXPECT_EQ(record.payload_bytes(), 16u);
  EXPECT_EQ(record.record_bytes(), 184u);
  const std::vector<uint8_t> r = g.Encode(kRemoteMagic);
  EXPECT_TRUE(record.CheckIntact(r.data()).ok());
  EXPECT_EQ(BlockRecord::HashOf(r.data()), g.hash);
  EXPECT_EQ(BlockRecord::ParentOf(r.data()), g.parent);
  EXPECT_EQ(BlockRecord::DepthOf(r.data()), 3);
  EXPECT_TRUE(record.IsOfThisModelAndLayout(r.data()));
  EXPECT_FALSE(BlockRecord(kRemoteMagic, g.layout, ModelIdentityHash("other")).IsOfThisModelAndLayout(r.data()));
  KvLayout bf16 = g.layout;
  bf16.dtype = KvDtype::kBF16;
  EXPECT_FALSE(BlockRecord(kRemoteMagic, bf16, ModelIdentityHash(g.model)).IsOfThisModelAndLayout(r.data()));
  // A disk record is not a remote one, and the other way round.
  const Status st = BlockRecord(kDiskMagic, g.layout, ModelIdentityHash(g.model)).CheckIntact(r.data());
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "bad magic");
}

// Every single flipped bit fails Verify, with the message of the part it hit.
TEST(BlockRecordTest, EveryFlippedByteIsCorrupt) {
  const Golden g;
  const BlockRecord record = g.Record(kDiskMagic);
  const std::vector<uint8_t> good = g.Encode(kDiskMagic);
  ASSERT_TRUE(VerifyWhole(record, good, g.info()).ok());
  for (size_t off = 0; off < good.size(); ++off) {
    std::vector<uint8_t> bad = good;
    bad[off] ^= 0x10;
    const Status st = VerifyWhole(record, bad, g.info());
    ASSERT_EQ(st.code(), StatusCode::kCorrupt) << "offset " << off;
    const char* want = off < 8                           ? "bad magic"
                       : off < BlockRecord::kHeaderBytes ? "header checksum mismatch"
                       : off < 168                       ? "tokens differ"
                                                         : "checksum mismatch";
    EXPECT_EQ(st.message(), want) << "offset " << off;
  }
}

// A header that is intact (checksum recomputed) but says something else.
TEST(BlockRecordTest, IntactHeaderOfAnotherBlockDoesNotMatch) {
  const Golden g;
  const BlockRecord record = g.Record(kDiskMagic);
  BlockRecordInfo other = g.info();
  other.depth = 4;
  std::vector<uint8_t> r(record.record_bytes());
  record.Encode(other, g.payload.data(), r.data());
  ASSERT_TRUE(record.CheckIntact(r.data()).ok());
  EXPECT_EQ(record.CheckMatches(r.data(), g.info()).message(),
            "header does not match the block (identity, hash, parent, depth or layout)");
  // The header of a different payload over the good body: the body checksum catches it.
  std::vector<uint8_t> payload = g.payload;
  payload[0] ^= 1;
  std::vector<uint8_t> mixed = g.Encode(kDiskMagic);
  record.EncodeHeader(g.info(), payload.data(), mixed.data());
  EXPECT_TRUE(record.CheckMatches(mixed.data(), g.info()).ok());
  EXPECT_EQ(VerifyWhole(record, mixed, g.info()).message(), "checksum mismatch");
}

TEST(BlockRecordTest, ExpectationsThatDisagreeAreCorrupt) {
  const Golden g;
  const BlockRecord record = g.Record(kDiskMagic);
  const std::vector<uint8_t> r = g.Encode(kDiskMagic);
  BlockRecordInfo want = g.info();
  want.depth = 0;
  EXPECT_EQ(VerifyWhole(record, r, want).code(), StatusCode::kCorrupt);
  want = g.info();
  want.parent = g.hash;
  EXPECT_EQ(VerifyWhole(record, r, want).code(), StatusCode::kCorrupt);
  want = g.info();
  want.hash = g.parent;
  EXPECT_EQ(VerifyWhole(record, r, want).code(), StatusCode::kCorrupt);
  const std::vector<int32_t> other_tokens{11, -3};
  want = g.info();
  want.tokens = other_tokens;
  EXPECT_EQ(VerifyWhole(record, r, want).message(), "tokens differ");
  const std::vector<int32_t> short_tokens{11};
  want.tokens = short_tokens;
  EXPECT_EQ(VerifyWhole(record, r, want).message(), "token count");
  // Another model reading these bytes.
  BlockRecord other(kDiskMagic, g.layout, ModelIdentityHash("other-model"));
  EXPECT_EQ(VerifyWhole(other, r, g.info()).code(), StatusCode::kCorrupt);
}

// The three parts may live apart (the disk tier reads the payload into place).
TEST(BlockRecordTest, VerifiesPartsInSeparateBuffers) {
  const Golden g;
  const BlockRecord record = g.Record(kDiskMagic);
  std::vector<uint8_t> header(BlockRecord::kHeaderBytes);
  record.EncodeHeader(g.info(), g.payload.data(), header.data());
  std::vector<uint8_t> tokens(record.token_bytes());
  std::memcpy(tokens.data(), g.tokens.data(), tokens.size());
  EXPECT_TRUE(record.Verify(header.data(), tokens.data(), g.payload.data(), g.info()).ok());
  std::vector<uint8_t> payload = g.payload;
  payload.back() ^= 0x80;
  EXPECT_EQ(record.Verify(header.data(), tokens.data(), payload.data(), g.info()).message(), "checksum mismatch");
}

}  // namespace
}  // namespace pg
