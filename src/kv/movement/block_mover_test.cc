#include "kv/movement/block_mover.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

namespace pg {
namespace {

// A job held in lane 0 (its only thread busy, another job queued behind it)
// does not hold back a job of lane 1: that one finishes and is collected
// while lane 0 still waits.
TEST(BlockMoverTest, ALaneNeverWaitsBehindAnother) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  BlockMover mover(2, 1);
  mover.Submit(0, 1, [released] {
    released.wait();
    return Status::Ok();
  });
  mover.Submit(0, 2, [] { return Status::Ok(); });  // FIFO: behind job 1
  mover.Submit(1, 3, [] { return IoError("lane 1's job"); });
  std::vector<BlockMover::Done> done;
  mover.Collect(&done, true);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 3u);
  EXPECT_EQ(done[0].status.code(), StatusCode::kIoError);
  EXPECT_EQ(mover.in_flight(), 2);
  release.set_value();
  std::vector<uint64_t> order;
  while (mover.in_flight() > 0) {
    done.clear();
    mover.Collect(&done, true);
    for (const auto& d : done) order.push_back(d.tag);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 2}));
}

// The destructor runs every queued job of every lane before it joins.
TEST(BlockMoverTest, DestructionRunsQueuedJobs) {
  std::atomic<int> ran{0};
  {
    BlockMover mover(2, 2);
    auto job = [&ran] {
      ran++;
      return Status::Ok();
    };
    for (int i = 0; i < 16; ++i) mover.Submit(i % 2, uint64_t(i), job);
  }
  EXPECT_EQ(ran.load(), 16);
}

}  // namespace
}  // namespace pg
