// ThreadPool: a persistent pool of worker threads for fork-join kernels.
//
// ParallelFor(n, fn) runs fn(i) for i in [0, n) across the workers and the
// calling thread, and returns when all are done. Work is handed out through
// an atomic counter, so uneven tasks balance themselves. No allocation per
// call. Workers spin briefly between jobs, then sleep on a condition variable.
//
// Thread-safety: one ParallelFor at a time per pool (calls are serialized by
// an internal mutex). fn must be safe to call concurrently for distinct i.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "base/function_ref.h"

namespace pg {

class ThreadPool {
 public:
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

 private:
  void WorkerLoop(int index);
  void Dispatch();

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // serializes callers

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};

  // Current job.
  FunctionRef<void(int64_t)>* job_ = nullptr;
  FunctionRef<void(int, int)>* all_job_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> pending_{0};
};

}  // namespace pg
