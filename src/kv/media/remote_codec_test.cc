#include "kv/media/remote_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

struct Block {
  std::vector<int32_t> tokens{5, 6, 7, 8};
  BlockHash parent = RootHash("model-x", "");
  BlockHash hash = ChainHash(parent, tokens);
  RemoteBlockInfo info() const { return RemoteBlockInfo{hash, parent, 0, tokens}; }
};

// One block of SmallLayout holding its pattern bytes, and room to decode it.
class RemoteCodecTest : public ::testing::Test {
 protected:
  RemoteCodecTest() : data(layout.block_bytes()), out(layout.block_bytes()) {
    kvtest::FillPattern(b.hash, data.data(), data.size());
  }

  const KvLayout layout = kvtest::SmallLayout();
  Block b;
  std::vector<uint8_t> data, out;
};

TEST_F(RemoteCodecTest, RoundTripAndKey) {
  RemoteCodec codec(layout, "model-x");
  const std::string v = codec.Encode(b.info(), data.data());
  EXPECT_EQ(v.size(), codec.value_bytes());
  EXPECT_EQ(v.size(), RemoteCodec::kHeaderBytes + 4 * 4 + layout.block_bytes());
  ASSERT_TRUE(codec.Decode(v, b.info(), out.data()).ok());
  EXPECT_EQ(out, data);
  const std::string key = codec.Key(b.hash);
  EXPECT_EQ(key.rfind("pgkv:1:", 0), 0u);
  EXPECT_NE(key.find(b.hash.Hex()), std::string::npos);
  EXPECT_NE(codec.Key(b.hash), RemoteCodec(layout, "model-y").Key(b.hash));  // namespaced by identity
}

// With a secret every value carries an HMAC tag over key and record: a
// value with a wrong tag, without one, or copied under another key is refused.
TEST_F(RemoteCodecTest, HmacTagAuthenticatesKeyAndValue) {
  RemoteCodec codec(layout, "model-x", "secret-of-sixteen-bytes");
  RemoteCodec plain(layout, "model-x");
  const std::string key = codec.Key(b.hash);
  const std::string v = codec.Encode(b.info(), data.data());
  EXPECT_TRUE(codec.authenticated());
  EXPECT_EQ(v.size(), plain.value_bytes() + RemoteCodec::kTagBytes);
  ASSERT_TRUE(codec.Authentic(key, v));
  ASSERT_TRUE(codec.Decode(v, b.info(), out.data()).ok());
  EXPECT_EQ(out, data);
  for (size_t off : {size_t(0), size_t(100), v.size() - 40, v.size() - 1}) {
    std::string bad = v;
    bad[off] = char(bad[off] ^ 0x01);
    EXPECT_FALSE(codec.Authentic(key, bad)) << "offset " << off;
  }
  EXPECT_FALSE(codec.Authentic(key, plain.Encode(b.info(), data.data())));  // no tag
  EXPECT_FALSE(codec.Authentic(key + "0", v));                              // another key
  EXPECT_FALSE(RemoteCodec(layout, "model-x", "another-secret-value").Authentic(key, v));
  EXPECT_TRUE(plain.Authentic(key, "anything"));  // no secret: nothing to check
}

TEST_F(RemoteCodecTest, EveryDisagreementIsCorrupt) {
  RemoteCodec codec(layout, "model-x");
  const std::string v = codec.Encode(b.info(), data.data());
  // Any single flipped byte: magic, header fields, header checksum, tokens, payload, body checksum.
  for (size_t off : {size_t(0), size_t(20), size_t(50), size_t(85), size_t(113), size_t(121), size_t(140), size_t(146),
                     size_t(155), size_t(161), size_t(200), v.size() - 1}) {
    std::string bad = v;
    bad[off] = char(bad[off] ^ 0x40);
    EXPECT_EQ(codec.Decode(bad, b.info(), out.data()).code(), StatusCode::kCorrupt) << "offset " << off;
  }
  EXPECT_EQ(codec.Decode(v.substr(0, v.size() - 1), b.info(), out.data()).code(), StatusCode::kCorrupt);
  EXPECT_EQ(codec.Decode(v + "x", b.info(), out.data()).code(), StatusCode::kCorrupt);
  // Another model's value under this key, other tokens, another parent or depth.
  EXPECT_EQ(RemoteCodec(layout, "model-y").Decode(v, b.info(), out.data()).code(), StatusCode::kCorrupt);
  Block other;
  other.tokens = {5, 6, 7, 9};
  RemoteBlockInfo want = b.info();
  want.tokens = other.tokens;
  EXPECT_EQ(codec.Decode(v, want, out.data()).code(), StatusCode::kCorrupt);
  want = b.info();
  want.depth = 1;
  EXPECT_EQ(codec.Decode(v, want, out.data()).code(), StatusCode::kCorrupt);
  want = b.info();
  want.parent = b.hash;
  EXPECT_EQ(codec.Decode(v, want, out.data()).code(), StatusCode::kCorrupt);
  // Another layout reads nothing.
  KvLayout l2 = layout;
  l2.dtype = KvDtype::kBF16;
  EXPECT_EQ(RemoteCodec(l2, "model-x").Decode(v, b.info(), out.data()).code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace pg
