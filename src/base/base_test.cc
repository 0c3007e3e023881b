#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "base/units.h"

namespace pg {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Status UseHalf(int x, int* out) {
  PG_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::Ok();
}

TEST(Status, ResultAndMacros) {
  int v = 0;
  EXPECT_TRUE(UseHalf(4, &v).ok());
  EXPECT_EQ(v, 2);
  Status s = UseHalf(3, &v);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "invalid argument: odd");
}

TEST(Units, ParseByteSize) {
  EXPECT_EQ(ParseByteSize("512MiB").value(), 512ull << 20);
  EXPECT_EQ(ParseByteSize("4GiB").value(), 4ull << 30);
  EXPECT_EQ(ParseByteSize("1.5KiB").value(), 1536u);
  EXPECT_EQ(ParseByteSize("1000").value(), 1000u);
  EXPECT_EQ(ParseByteSize("2MB").value(), 2000000u);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("-1MiB").ok());
  EXPECT_FALSE(ParseByteSize("12XB").ok());
  EXPECT_FALSE(ParseByteSize("99999999999TiB").ok());
}

TEST(ThreadPool, ParallelForCoversEveryTaskOnce) {
  ThreadPool pool(4);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(1000);
    pool.ParallelFor(1000, [&](int64_t i) { hits[i].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  // Task counts around the claim sizes (runs of 1 up to n / 16 tasks).
  for (int64_t n : {1, 2, 3, 15, 16, 17, 33, 100'003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.ParallelFor(n, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << n;
  }
  std::atomic<int> ran{0};
  pool.RunOnAll([&](int t, int n) {
    EXPECT_EQ(n, 4);
    ran.fetch_add(1 << (t * 4));
  });
  EXPECT_EQ(ran.load(), 0x1111);
}

// An idle pool's workers stop spinning and block; a job then wakes them all
// (every task still runs once), and a worker that outlasts the caller's spin
// is waited for, not lost.
TEST(ThreadPool, IdleWorkersBlockAndWakeForTheNextJob) {
  ThreadPool pool(3);
  for (int round = 0; round < 4; ++round) {
    while (pool.blocked_workers() < 2) std::this_thread::yield();  // both workers idle past kSpinNs
    std::vector<std::atomic<int>> hits(64);
    pool.ParallelFor(64, [&](int64_t i) { hits[i].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  // A worker busy far longer than the caller spins: RunOnAll returns only once it is done.
  std::atomic<bool> slow_done{false};
  pool.RunOnAll([&](int t, int) {
    if (t != 1) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(20 * ThreadPool::kSpinNs);
    while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
    slow_done.store(true);
  });
  EXPECT_TRUE(slow_done.load());
}

}  // namespace
}  // namespace pg
