#include "base/held_text.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

TEST(HeldText, ReleasesAllButTheHeldTail) {
  std::string pending = "abcdef";
  EXPECT_EQ(ReleaseAllBut(&pending, 2), "abcd");
  EXPECT_EQ(pending, "ef");
  EXPECT_EQ(ReleaseAllBut(&pending, 2), "");
  EXPECT_EQ(pending, "ef");
  EXPECT_EQ(ReleaseAllBut(&pending, 0), "ef");
  EXPECT_EQ(pending, "");
}

}  // namespace
}  // namespace pg
