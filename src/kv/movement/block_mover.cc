#include "kv/movement/block_mover.h"

#include "base/check.h"

namespace pg {

BlockMover::BlockMover(int n_threads) {
  PG_CHECK(n_threads >= 1);
  for (int i = 0; i < n_threads; ++i) threads_.emplace_back([this] { Loop(); });
}

BlockMover::~BlockMover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BlockMover::Submit(uint64_t tag, std::function<Status()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(tag, std::move(work));
  }
  ++in_flight_;
  work_cv_.notify_one();
}

void BlockMover::Collect(std::vector<Done>* out, bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait && in_flight_ > 0) done_cv_.wait(lock, [&] { return !done_.empty(); });
  for (auto& d : done_) out->push_back(std::move(d));
  in_flight_ -= int64_t(done_.size());
  done_.clear();
}

void BlockMover::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    auto job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status st = job.second();
    lock.lock();
    done_.push_back(Done{job.first, std::move(st)});
    done_cv_.notify_all();
  }
}

}  // namespace pg
