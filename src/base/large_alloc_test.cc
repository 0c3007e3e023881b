#include "base/large_alloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace pg {
namespace {

TEST(LargeAlloc, LargeBuffersStartOnAHugePageAndAreUsable) {
  const size_t bytes = 3 * kHugePage + 4096 + 64;  // a tail past the last whole huge page
  auto* p = static_cast<uint8_t*>(AllocateLarge(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(IsHugePageAligned(p));
  std::memset(p, 0x5a, bytes);
  EXPECT_EQ(p[0], 0x5a);
  EXPECT_EQ(p[bytes - 1], 0x5a);
  std::free(p);
}

TEST(LargeAlloc, SmallBuffersAreCacheLineAligned) {
  for (size_t bytes : {size_t{1}, size_t{100}, kHugePage - 1}) {
    void* p = AllocateLarge(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 1, bytes);
    std::free(p);
  }
}

}  // namespace
}  // namespace pg
