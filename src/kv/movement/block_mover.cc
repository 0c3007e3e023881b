#include "kv/movement/block_mover.h"

#include "base/check.h"

namespace pg {

BlockMover::BlockMover(int n_lanes, int threads_per_lane) : lanes_(size_t(n_lanes)) {
  PG_CHECK(n_lanes >= 1 && threads_per_lane >= 1);
  for (Lane& lane : lanes_)
    for (int i = 0; i < threads_per_lane; ++i) threads_.emplace_back([this, &lane] { Loop(lane); });
}

BlockMover::~BlockMover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  for (Lane& lane : lanes_) lane.work_cv.notify_all();
  for (auto& t : threads_) t.join();
}

void BlockMover::Submit(int lane, uint64_t tag, std::function<Status()> work) {
  PG_CHECK(lane >= 0 && size_t(lane) < lanes_.size());
  Lane& l = lanes_[size_t(lane)];
  {
    std::lock_guard<std::mutex> lock(mu_);
    l.queue.emplace_back(tag, std::move(work));
  }
  ++in_flight_;
  l.work_cv.notify_one();
}

void BlockMover::Collect(std::vector<Done>* out, bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait && in_flight_ > 0) done_cv_.wait(lock, [&] { return !done_.empty(); });
  for (auto& d : done_) out->push_back(std::move(d));
  in_flight_ -= int64_t(done_.size());
  done_.clear();
}

void BlockMover::Loop(Lane& lane) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    lane.work_cv.wait(lock, [&] { return stop_ || !lane.queue.empty(); });
    if (lane.queue.empty()) return;  // stop_ and drained
    auto job = std::move(lane.queue.front());
    lane.queue.pop_front();
    lock.unlock();
    Status st = job.second();
    lock.lock();
    done_.push_back(Done{job.first, std::move(st)});
    done_cv_.notify_all();
  }
}

}  // namespace pg
