// DeviceBlockArena's copies: asynchronous on the arena's copy stream, each
// complete at its CopyDone's Wait (an event). Under the emulator a copy not
// waited for has not happened yet, so these tests also show that the arena
// really queues its copies rather than making them at once. PinnedHostMemory
// gives the host tier its pinned memory.
#include "gpu/executor/device_arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/executor/pinned_memory.h"
#include "gpu/gpu_test_util.h"
#include "kv/media/block_arena.h"

namespace pg::gpu {
namespace {

TEST(DeviceBlockArena, CopiesInAndOutLandAtTheirWait) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  auto arena = DeviceBlockArena::Create(4, 1000);
  ASSERT_TRUE(arena.ok()) << arena.status().ToString();
  auto host = HostBlockArena::Create(2, 1000, PinnedHostMemory());
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  uint8_t* src = (*host)->BlockPtr(0);
  uint8_t* dst = (*host)->BlockPtr(1);
  std::memset(src, 3, 1000);
  std::memset(dst, 0, 1000);
  CopyDone in = (*arena)->CopyInAsync(2, src);
  CopyDone out = (*arena)->CopyOutAsync(2, dst);
#if defined(PROSGROW_GPU_EMULATED)
  EXPECT_EQ(dst[0], 0);  // queued on the copy stream, not done
#endif
  ASSERT_TRUE(in.Wait().ok());
  ASSERT_TRUE(out.Wait().ok());
  EXPECT_EQ(dst[0], 3);
  EXPECT_EQ(dst[999], 3);
  // The synchronous verbs are the same copies, waited for at once.
  std::memset(src, 8, 1000);
  (*arena)->CopyIn(3, src);
  (*arena)->CopyOut(3, dst);
  EXPECT_EQ(dst[500], 8);
}

TEST(DeviceBlockArena, ManyCopiesInFlightEachCompleteAtItsOwnWait) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int n = 6;
  auto arena = DeviceBlockArena::Create(n, 256);
  ASSERT_TRUE(arena.ok());
  auto host = HostBlockArena::Create(2 * n, 256, PinnedHostMemory());
  ASSERT_TRUE(host.ok());
  std::vector<CopyDone> ins, outs;
  for (int i = 0; i < n; ++i) {
    std::memset((*host)->BlockPtr(i), i + 1, 256);
    std::memset((*host)->BlockPtr(n + i), 0, 256);
    ins.push_back((*arena)->CopyInAsync(i, (*host)->BlockPtr(i)));
    outs.push_back((*arena)->CopyOutAsync(i, (*host)->BlockPtr(n + i)));
  }
  for (int i = n - 1; i >= 0; --i) {  // waited for in another order than issued
    ASSERT_TRUE(ins[size_t(i)].Wait().ok());
    ASSERT_TRUE(outs[size_t(i)].Wait().ok());
    EXPECT_EQ((*host)->BlockPtr(n + i)[255], i + 1);
  }
}

}  // namespace
}  // namespace pg::gpu
