// BlockHash and BlockHashKey against values computed independently (Python's
// hashlib and hmac over the byte layout block_hash.h documents), and HMAC
// against RFC 4231's test vectors.
#include "kv/index/block_hash.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pg {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

const std::vector<int32_t> kTokens = {1, 2, 3, -7};
constexpr const char* kSecret = "a-fleet-secret-of-32-bytes-long!";

// Without a secret the hashes are exactly what they always were:
// SHA-256("pgkv-root-1" | u64le(5) | "model" | u64le(6) | "tenant"), then
// SHA-256(root | int32le tokens).
TEST(BlockHash, UnkeyedIsThePlainSha256Chain) {
  const BlockHash root = RootHash("model", "tenant");
  EXPECT_EQ(root.Hex(), "58f1ddada885335a433d005b570b8c3cb4256b2775a0e99de75e325ea2178e41");
  EXPECT_EQ(ChainHash(root, kTokens).Hex(), "fabbe80c8ab050f117bd1142101f49d43ae7535db289c5b218ba7621e8037f3b");
  // An empty secret is no secret.
  EXPECT_FALSE(BlockHashKey("").keyed());
  EXPECT_EQ(RootHash("model", "tenant", BlockHashKey("")), root);
}

// With a secret each step is HMAC-SHA256(secret, the same bytes).
TEST(BlockHash, KeyedIsHmacSha256OverTheSameBytes) {
  const BlockHashKey key(kSecret);
  EXPECT_TRUE(key.keyed());
  const BlockHash root = RootHash("model", "tenant", key);
  EXPECT_EQ(root.Hex(), "dddc7484c8d412505dbdac10ab24f6883d4ac26b3562aac91f4d1017ba0b40b5");
  const BlockHash block = ChainHash(root, kTokens, key);
  EXPECT_EQ(block.Hex(), "2042de0416ab0aa3aa99b8b09096c10a0372de70e40e8ed617ef4f9a192f80c4");
  // Without the secret a seen hash cannot be extended by a guessed block.
  EXPECT_NE(ChainHash(root, kTokens), block);
  EXPECT_NE(RootHash("model", "tenant", BlockHashKey("another-fleet-secret-32-bytes!!!")), root);
  EXPECT_EQ(RootHash("model", "tenant", BlockHashKey(kSecret)), root);  // the same secret agrees
}

TEST(BlockHash, HmacMatchesRfc4231) {
  // Test case 2: a short key.
  EXPECT_EQ(BlockHashKey("Jefe").Digest(Bytes("what do ya want "), Bytes("for nothing?")).Hex(),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than SHA-256's block is hashed first.
  const std::string long_key(131, '\xaa');
  EXPECT_EQ(BlockHashKey(long_key).Digest(Bytes("Test Using Larger Than Block-Size Key - Hash Key First")).Hex(),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

}  // namespace
}  // namespace pg
