#include "kv/media/block_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "base/large_alloc.h"
#include "kv/media/block_arena.h"
#include "kv/media/staging_pool.h"

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

TEST(HostBlockArenaTest, MemoryComesFromTheGivenHostMemory) {
  int allocs = 0, frees = 0;
  HostMemory m;
  m.alloc = [&](size_t bytes) {
    ++allocs;
    return std::aligned_alloc(64, bytes);
  };
  m.free = [&](void* p) {
    ++frees;
    std::free(p);
  };
  {
    auto arena = HostBlockArena::Create(3, 100, m);
    ASSERT_TRUE(arena.ok());
    EXPECT_EQ(allocs, 1);
    uint8_t buf[100];
    std::memset(buf, 5, 100);
    CopyDone done = (*arena)->CopyInAsync(2, buf);  // RAM: copied at once
    EXPECT_EQ((*arena)->BlockPtr(2)[99], 5);
    EXPECT_TRUE(done.Wait().ok());
  }
  EXPECT_EQ(frees, 1);
  m.alloc = [](size_t) -> void* { return nullptr; };
  EXPECT_FALSE(HostBlockArena::Create(3, 100, m).ok());
}

// A RAM arena of 2 MiB or more starts on a huge page (AllocateLarge), so the
// attention kernels walking its scattered blocks take few TLB misses.
TEST(HostBlockArenaTest, LargeRamArenaStartsOnAHugePage) {
  auto arena = HostBlockArena::Create(2048, 4096);  // 8 MiB
  ASSERT_TRUE(arena.ok());
  EXPECT_TRUE(IsHugePageAligned((*arena)->BlockPtr(0)));
  std::memset((*arena)->BlockPtr(2047), 1, 4096);
  EXPECT_EQ((*arena)->BlockPtr(2047)[4095], 1);
}

TEST(StagingPoolTest, OneBufferPerMoverThread) {
  auto pool = StagingPool::Create(2, 100, {});
  ASSERT_TRUE(pool.ok());
  uint8_t* a = (*pool)->Acquire();
  uint8_t* b = (*pool)->Acquire();
  EXPECT_NE(a, b);
  std::memset(a, 1, 100);  // each is a whole block
  std::memset(b, 2, 100);
  (*pool)->Release(a);
  EXPECT_EQ((*pool)->Acquire(), a);
  EXPECT_FALSE(StagingPool::Create(0, 100, {}).ok());
}

TEST(CopyDoneDeathTest, ACopyNeverWaitedForIsABug) {
  EXPECT_DEATH({ CopyDone d([] { return Status::Ok(); }); }, "never waited for");
}

TEST(CopyDoneTest, WaitReturnsTheCopysStatusOnce) {
  int waits = 0;
  CopyDone d([&] {
    ++waits;
    return Internal("copy failed");
  });
  EXPECT_FALSE(d.Wait().ok());
  EXPECT_TRUE(d.Wait().ok());  // already waited for
  EXPECT_EQ(waits, 1);
  EXPECT_TRUE(CopyDone().Wait().ok());
}

}  // namespace
}  // namespace pg
