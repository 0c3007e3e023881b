#include "base/thread_pool.h"

#include <cstdlib>

namespace pg {

int ThreadPool::DefaultThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads > 0 ? n_threads : DefaultThreads()) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a little: kernels are issued back to back during a forward pass.
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < 20000) {
      ++spins;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    if (all_job_) {
      (*all_job_)(index, n_threads_);
    } else {
      for (;;) {
        int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
        if (i >= n_tasks_) break;
        (*job_)(i);
      }
    }
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Dispatch() {
  pending_.store(n_threads_ - 1, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lk(mu_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
}

void ThreadPool::ParallelFor(int64_t n_tasks, FunctionRef<void(int64_t)> fn) {
  if (n_tasks <= 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> call_lk(call_mu_);
  job_ = &fn;
  all_job_ = nullptr;
  n_tasks_ = n_tasks;
  next_.store(0, std::memory_order_relaxed);
  Dispatch();
  for (;;) {
    int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_tasks) break;
    fn(i);
  }
  while (pending_.load(std::memory_order_acquire) != 0) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  job_ = nullptr;
}

void ThreadPool::RunOnAll(FunctionRef<void(int, int)> fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  std::lock_guard<std::mutex> call_lk(call_mu_);
  all_job_ = &fn;
  job_ = nullptr;
  Dispatch();
  fn(0, n_threads_);
  while (pending_.load(std::memory_order_acquire) != 0) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  all_job_ = nullptr;
}

}  // namespace pg
