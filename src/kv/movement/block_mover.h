// BlockMover: background I/O threads that run block copies (device <-> host
// memcpy or driver copies, disk reads and writes) off the scheduler thread.
//
// The scheduler thread Submit()s jobs tagged with an id and later Collect()s
// their results; it decides everything about slot ownership before
// submitting, and pins the slots a job touches until the job is collected.
// Jobs run in FIFO order per thread, n_threads at a time.
//
// Thread-safety: Submit / Collect / in_flight are called from one thread (the
// scheduler); jobs run on the mover threads; the two queues are guarded by
// one mutex.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"

namespace pg {

class BlockMover {
 public:
  struct Done {
    uint64_t tag = 0;
    Status status;
  };

  explicit BlockMover(int n_threads);
  ~BlockMover();  // runs the queued jobs to completion, then joins
  BlockMover(const BlockMover&) = delete;
  BlockMover& operator=(const BlockMover&) = delete;

  void Submit(uint64_t tag, std::function<Status()> work);
  // Moves finished jobs to *out. With wait, blocks until at least one job
  // has finished when none has yet and some are in flight.
  void Collect(std::vector<Done>* out, bool wait);
  // Submitted and not yet collected.
  int64_t in_flight() const { return in_flight_; }

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<std::pair<uint64_t, std::function<Status()>>> queue_;
  std::vector<Done> done_;
  bool stop_ = false;
  int64_t in_flight_ = 0;  // scheduler thread only
  std::vector<std::thread> threads_;
};

}  // namespace pg
