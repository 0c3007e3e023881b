// ThreadPool: a persistent pool of worker threads for fork-join kernels.
//
// ParallelFor(n, fn) runs fn(i) for i in [0, n) across the workers and the
// calling thread, and returns when all are done. Work is handed out through
// an atomic counter in runs of tasks, each a 1/(kClaimShare * threads) share
// of the tasks left (so runs shrink to single tasks at the end): uneven tasks
// balance themselves, and thousands of tiny ones cost tens of claims. Tasks
// are claimed in increasing order. No allocation per call.
//
// Waiting, on both sides, spins for at most kSpinNs (a forward pass issues
// its kernels back to back, microseconds apart) and then blocks on a futex
// (std::atomic wait/notify): a worker between jobs on `generation_`, the
// caller at the end of a job on `pending_`. An idle pool (the server between
// steps) thus sleeps instead of burning the cores, and a caller whose worker
// lost its core to another process sleeps until that worker is done instead
// of spinning through its time slice. notify costs no system call while
// nobody is blocked.
//
// Thread-safety: one ParallelFor at a time per pool (calls are serialized by
// an internal mutex). fn must be safe to call concurrently for distinct i.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "base/function_ref.h"

namespace pg {

class ThreadPool {
 public:
  // How long a waiting thread spins before it blocks, in nanoseconds.
  static constexpr int64_t kSpinNs = 50'000;
  // A claim takes 1/(kClaimShare * threads) of the tasks left, at least one.
  static constexpr int64_t kClaimShare = 4;

  // n_threads includes the calling thread; 0 means hardware concurrency.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(task) for task in [0, n_tasks).
  void ParallelFor(int64_t n_tasks, FunctionRef<void(int64_t)> fn);

  // Runs fn(thread_index, n_threads) once on every thread of the pool.
  void RunOnAll(FunctionRef<void(int, int)> fn);

  static int DefaultThreads();

  // Workers blocked on the futex right now (an idle pool: all of them).
  int blocked_workers() const { return blocked_.load(std::memory_order_acquire); }

 private:
  void WorkerLoop(int index);
  bool Claim(int64_t* begin, int64_t* end);
  void RunClaims();  // the current ParallelFor job's tasks, claim by claim
  void Dispatch();
  void WaitForWorkers();

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // serializes callers

  std::atomic<uint32_t> generation_{0};  // bumped once per job (and at stop)
  std::atomic<bool> stop_{false};
  std::atomic<int> blocked_{0};

  // Current job.
  FunctionRef<void(int64_t)>* job_ = nullptr;
  FunctionRef<void(int, int)>* all_job_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> pending_{0};  // workers not yet done with the current job
};

}  // namespace pg
