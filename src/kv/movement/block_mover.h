// BlockMover: background I/O threads that run block copies (device <-> host
// memcpy or driver copies, disk reads and writes) off the scheduler thread.
//
// The scheduler thread Submit()s jobs tagged with an id into a lane and later
// Collect()s their results; it decides everything about slot ownership
// before submitting, and pins the slots a job touches until the job is
// collected. Each lane is a FIFO queue served by threads of its own
// (threads_per_lane of them), so a job never waits behind another lane's
// jobs; within a lane, jobs start in FIFO order. Finished jobs of every lane
// go to one completion queue.
//
// Thread-safety: Submit / Collect / in_flight are called from one thread (the
// scheduler); jobs run on the mover threads; the lanes' queues and the
// completion queue are guarded by one mutex.
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

  BlockMover(int n_lanes, int threads_per_lane);
  ~BlockMover();  // runs the queued jobs to completion, then joins
  BlockMover(const BlockMover&) = delete;
  BlockMover& operator=(const BlockMover&) = delete;

  // Queues work at the back of lane `lane` (0 <= lane < n_lanes).
  void Submit(int lane, uint64_t tag, std::function<Status()> work);
  // Moves finished jobs (of any lane) to *out. With wait, blocks until at
  // least one job has finished when none has yet and some are in flight.
  void Collect(std::vector<Done>* out, bool wait);
  // Submitted and not yet collected.
  int64_t in_flight() const { return in_flight_; }

 private:
  struct Lane {
    std::deque<std::pair<uint64_t, std::function<Status()>>> queue;  // guarded by mu_
    std::condition_variable work_cv;
  };
  void Loop(Lane& lane);

  std::mutex mu_;
  std::vector<Lane> lanes_;  // fixed size: its threads hold references
  std::condition_variable done_cv_;
  std::vector<Done> done_;
  bool stop_ = false;
  int64_t in_flight_ = 0;  // scheduler thread only
  std::vector<std::thread> threads_;
};

}  // namespace pg
