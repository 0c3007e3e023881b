#include "kv/index/prefix_index.h"

#include <gtest/gtest.h>

#include <vector>

#include "kv/index/block_hash.h"

namespace pg {
namespace {

TEST(BlockHashTest, ChainDependsOnEverything) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  const BlockHash r1 = RootHash("model-a", ""), r2 = RootHash("model-b", ""), r3 = RootHash("model-a", "salt");
  EXPECT_NE(r1, r2);
  EXPECT_NE(r1, r3);
  EXPECT_NE(ChainHash(r1, a), ChainHash(r1, b));
  EXPECT_NE(ChainHash(r1, a), ChainHash(r2, a));
  EXPECT_EQ(ChainHash(r1, a), ChainHash(r1, a));
  // Length-prefixed fields: ("ab","c") and ("a","bc") must differ.
  EXPECT_NE(RootHash("ab", "c"), RootHash("a", "bc"));
  // Known SHA-256 of "abc".
  EXPECT_EQ(ModelIdentityHash("abc").Hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto back = BlockHash::FromHex(r1.Hex());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, r1);
  EXPECT_FALSE(BlockHash::FromHex("zz").ok());
}

TEST(BlockHashTest, LongBlocksUseTheStreamingPath) {
  std::vector<int32_t> t(1000);
  for (int i = 0; i < 1000; ++i) t[size_t(i)] = i;
  const BlockHash r = RootHash("m", "");
  EXPECT_EQ(ChainHash(r, t), ChainHash(r, t));
  t[999] = 0;
  EXPECT_NE(ChainHash(r, t), ChainHash(r, std::vector<int32_t>(1000, 0)));
}

// Builds the chain of `tokens` (page 2) in the index; returns ids.
std::vector<uint32_t> InsertChain(PrefixIndex& idx, const BlockHash& root, const std::vector<int32_t>& tokens) {
  std::vector<uint32_t> ids;
  BlockHash h = root;
  for (size_t b = 0; b + 2 <= tokens.size(); b += 2) {
    std::span<const int32_t> blk(tokens.data() + b, 2);
    const BlockHash nh = ChainHash(h, blk);
    uint32_t id = idx.Find(nh);
    if (id == PrefixIndex::kNone) id = idx.Insert(nh, h, int32_t(b / 2), blk);
    ids.push_back(id);
    h = nh;
  }
  return ids;
}

TEST(PrefixIndexTest, LongestPrefixMatchComparesTokens) {
  PrefixIndex idx;
  const BlockHash root = RootHash("m", "");
  const std::vector<int32_t> conv = {1, 2, 3, 4, 5, 6, 7, 8};
  auto ids = InsertChain(idx, root, conv);
  ASSERT_EQ(ids.size(), 4u);
  std::vector<uint32_t> out;
  idx.MatchChain(root, std::vector<int32_t>{1, 2, 3, 4, 9, 9, 7, 8}, 2, 100, {}, &out);
  EXPECT_EQ(out, (std::vector<uint32_t>{ids[0], ids[1]}));
  out.clear();
  idx.MatchChain(root, conv, 2, 3, {}, &out);  // capped
  EXPECT_EQ(out.size(), 3u);
  out.clear();
  idx.MatchChain(RootHash("m", "other salt"), conv, 2, 100, {}, &out);
  EXPECT_TRUE(out.empty());
  // A stored block whose tokens differ from its key (simulated collision) is a miss.
  idx.at(ids[0]).tokens = {1, 99};
  out.clear();
  idx.MatchChain(root, conv, 2, 100, {}, &out);
  EXPECT_TRUE(out.empty());
  idx.at(ids[0]).tokens = {1, 2};
  EXPECT_TRUE(idx.CheckIntegrity().ok());
}

TEST(PrefixIndexTest, ChildCountsAndEvictionOrder) {
  PrefixIndex idx;
  const BlockHash root = RootHash("m", "");
  auto a = InsertChain(idx, root, {1, 1, 2, 2, 3, 3});
  auto b = InsertChain(idx, root, {1, 1, 2, 2, 4, 4});  // shares two blocks
  ASSERT_EQ(idx.size(), 4u);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(idx.children_any(idx.at(a[1]).hash), 2);
  // Put all on "disk", evictable, same tick: deepest first.
  for (uint32_t id : {a[0], a[1], a[2], b[2]}) {
    idx.at(id).copy(kDiskTier) = TierCopy{TierCopy::kFile, true};
    idx.at(id).last_tick = 7;
    idx.Refresh(id, 1u << kDiskTier);
  }
  EXPECT_EQ(idx.children_in(idx.at(a[1]).hash, kDiskTier), 2);
  EXPECT_EQ(idx.children_in(idx.at(a[1]).hash, kDeviceTier), 0);
  ASSERT_EQ(idx.evictable(kDiskTier).size(), 4u);
  EXPECT_EQ(idx.at(idx.evictable(kDiskTier).begin()->id).depth, 2);
  EXPECT_EQ(idx.at(std::prev(idx.evictable(kDiskTier).end())->id).depth, 0);
  // An older block goes before everything else.
  idx.at(a[0]).last_tick = 1;
  idx.Refresh(a[0], 1u << kDiskTier);
  EXPECT_EQ(idx.evictable(kDiskTier).begin()->id, a[0]);
  EXPECT_TRUE(idx.CheckIntegrity().ok());
  // Erase the middle; counts are kept by hash and come back with a re-insert.
  const BlockHash mid = idx.at(a[1]).hash, mid_parent = idx.at(a[1]).parent;
  const std::vector<int32_t> mid_tokens = idx.at(a[1]).tokens;
  idx.at(a[1]).copy(kDiskTier).Clear();
  idx.Refresh(a[1], 0);
  idx.Erase(a[1]);
  EXPECT_EQ(idx.Find(mid), PrefixIndex::kNone);
  EXPECT_EQ(idx.children_any(mid), 2);
  EXPECT_TRUE(idx.CheckIntegrity().ok());
  const uint32_t again = idx.Insert(mid, mid_parent, 1, mid_tokens);
  EXPECT_EQ(idx.children_in(mid, kDiskTier), 2);
  EXPECT_EQ(idx.at(again).depth, 1);
  EXPECT_TRUE(idx.CheckIntegrity().ok());
}

TEST(PrefixIndexTest, IntegrityCatchesStaleBookkeeping) {
  PrefixIndex idx;
  auto ids = InsertChain(idx, RootHash("m", ""), {1, 2});
  idx.at(ids[0]).copy(kHostTier).slot = 3;  // changed without Refresh
  EXPECT_FALSE(idx.CheckIntegrity().ok());
  idx.Refresh(ids[0], 0);
  EXPECT_TRUE(idx.CheckIntegrity().ok());
}

}  // namespace
}  // namespace pg
