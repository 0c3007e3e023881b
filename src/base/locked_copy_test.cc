#include "base/locked_copy.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace pg {
namespace {

TEST(LockedCopy, CopiesWhileWritersHoldTheSameMutex) {
  std::mutex mu;
  std::vector<std::string> names;
  std::thread writer([&] {
    for (int i = 0; i < 1000; ++i) {
      std::lock_guard<std::mutex> lock(mu);
      names.push_back(std::to_string(i));
    }
  });
  size_t last = 0;
  for (int i = 0; i < 100; ++i) {
    const std::vector<std::string> seen = LockedCopy(mu, names);
    EXPECT_GE(seen.size(), last);  // a whole vector each time, never a torn one
    for (size_t k = 0; k < seen.size(); ++k) ASSERT_EQ(seen[k], std::to_string(k));
    last = seen.size();
  }
  writer.join();
  EXPECT_EQ(LockedCopy(mu, names).size(), 1000u);
}

}  // namespace
}  // namespace pg
