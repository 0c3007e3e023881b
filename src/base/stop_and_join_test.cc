#include "base/stop_and_join.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace pg {
namespace {

TEST(StopAndJoin, WakesEveryWaiterAndJoinsEveryThread) {
  std::mutex mu;
  std::condition_variable a, b;
  bool stop = false;
  int woken = 0;
  auto waiter = [&](std::condition_variable* cv) {
    std::unique_lock<std::mutex> lk(mu);
    cv->wait(lk, [&] { return stop; });
    ++woken;
  };
  std::thread ta(waiter, &a), tb(waiter, &b);
  StopAndJoin(mu, &stop, {&a, &b}, {&ta, &tb});
  EXPECT_TRUE(stop);
  EXPECT_EQ(woken, 2);
  EXPECT_FALSE(ta.joinable());
  EXPECT_FALSE(tb.joinable());
}

}  // namespace
}  // namespace pg
