#include "kv/media/block_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "kv/media/block_arena.h"

namespace pg {
namespace {

TEST(BlockPoolTest, AllocateRefReleaseCycle) {
  BlockPool pool(4);
  EXPECT_EQ(pool.n_free(), 4);
  std::set<int32_t> got;
  for (int i = 0; i < 4; ++i) got.insert(pool.Allocate());
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(pool.Allocate(), -1);
  pool.Ref(2);
  EXPECT_EQ(pool.refcount(2), 2);
  EXPECT_EQ(pool.Unref(2), 1);
  EXPECT_EQ(pool.Unref(2), 0);
  EXPECT_FALSE(pool.is_free(2));  // refcount 0 but not released: "cached"
  pool.Release(2);
  EXPECT_TRUE(pool.is_free(2));
  EXPECT_EQ(pool.Allocate(), 2);
  EXPECT_TRUE(pool.CheckIntegrity().ok());
}

TEST(BlockPoolTest, ZeroCapacity) {
  BlockPool pool(0);
  EXPECT_EQ(pool.Allocate(), -1);
  EXPECT_TRUE(pool.CheckIntegrity().ok());
}

TEST(BlockPoolDeathTest, ReleasingAHeldSlotIsABug) {
  BlockPool pool(2);
  const int32_t s = pool.Allocate();
  EXPECT_DEATH(pool.Release(s), "refs_");
}

TEST(HostBlockArenaTest, AlignedStableDistinctSlots) {
  auto arena = HostBlockArena::Create(5, 100);
  ASSERT_TRUE(arena.ok());
  auto& a = **arena;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.BlockPtr(i)) % 64, 0u);
    std::memset(a.BlockPtr(i), i + 1, 100);
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.BlockPtr(i)[99], i + 1);
  uint8_t buf[100];
  a.CopyOut(3, buf);
  EXPECT_EQ(buf[0], 4);
  std::memset(buf, 9, 100);
  a.CopyIn(0, buf);
  EXPECT_EQ(a.BlockPtr(0)[50], 9);
  EXPECT_EQ(a.BlockPtr(1)[0], 2);
}

}  // namespace
}  // namespace pg
