#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace pg {
namespace {

void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// Spins while `a` holds `old`, for up to ThreadPool::kSpinNs, then blocks on
// the futex until it changes. Returns the new value. The clock is read once
// per 64 spins (a pause is tens of cycles; a clock read about as much).
template <typename T>
T WaitWhileEquals(const std::atomic<T>& a, T old, std::atomic<int>* blocked) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until = Clock::now() + std::chrono::nanoseconds(ThreadPool::kSpinNs);
  for (uint32_t spins = 1;; ++spins) {
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    if (spins % 64 == 0 && Clock::now() >= until) break;
    CpuRelax();
  }
  for (;;) {
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    if (blocked) blocked->fetch_add(1, std::memory_order_release);
    a.wait(old, std::memory_order_acquire);
    if (blocked) blocked->fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace

// Claims the next run of tasks [*begin, *end): a share of what is left
// (guided scheduling: big runs first, single tasks at the end), so a job of
// thousands of small tasks costs tens of claims on the shared counter rather
// than one contended atomic per task, and uneven tasks still balance.
bool ThreadPool::Claim(int64_t* begin, int64_t* end) {
  int64_t i = next_.load(std::memory_order_relaxed);
  for (;;) {
    if (i >= n_tasks_) return false;
    const int64_t run = std::max<int64_t>(1, (n_tasks_ - i) / (kClaimShare * n_threads_));
    if (next_.compare_exchange_weak(i, i + run, std::memory_order_relaxed)) {
      *begin = i;
      *end = i + run;
      return true;
    }
  }
}

void ThreadPool::RunClaims() {
  int64_t begin = 0, end = 0;
  while (Claim(&begin, &end))
    for (int64_t i = begin; i < end; ++i) (*job_)(i);
}

int ThreadPool::DefaultThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads > 0 ? n_threads : DefaultThreads()) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int index) {
  uint32_t seen = 0;
  for (;;) {
    seen = WaitWhileEquals(generation_, seen, &blocked_);
    if (stop_.load(std::memory_order_relaxed)) return;
    if (all_job_) {
      (*all_job_)(index, n_threads_);
    } else {
      RunClaims();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::Dispatch() {
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  // The release publishes the job fields and pending_ to the workers.
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
}

void ThreadPool::WaitForWorkers() {
  for (int p = pending_.load(std::memory_order_acquire); p != 0;) p = WaitWhileEquals(pending_, p, nullptr);
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
  RunClaims();
  WaitForWorkers();
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
  WaitForWorkers();
  all_job_ = nullptr;
}

}  // namespace pg
