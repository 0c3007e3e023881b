// The emulator's streams and events: each created stream is a queue of host
// work (copies, memsets) that runs only when something orders it (see
// emu_runtime.h), so a missing wait in the code under test shows up as wrong
// bytes. An event names a point in one stream's queue (the number of
// operations queued before it was recorded) and is complete once the queue
// has run that far.
//
// Thread-safety: any host thread may queue, record and wait; each queue has
// its own mutex and runs its work under it, in order.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/runtime/emu_runtime.h"

namespace pg::gpu::emu {

struct WorkQueue {
  std::mutex mu;
  std::deque<std::function<void()>> pending;
  uint64_t queued = 0;  // operations ever queued
  uint64_t run = 0;     // operations ever run (a prefix of the queued ones)
};

struct Stream {
  std::shared_ptr<WorkQueue> q = std::make_shared<WorkQueue>();
};

struct Event {
  std::mutex mu;
  bool recorded = false;
  std::shared_ptr<WorkQueue> q;  // null: recorded on the default stream (complete)
  uint64_t point = 0;            // complete once q->run >= point
  bool reported_not_ready = false;
  bool timed = false;
  std::chrono::steady_clock::time_point at;  // when it was seen complete
};

namespace {

struct StreamRegistry {
  std::mutex mu;
  std::vector<std::shared_ptr<WorkQueue>> queues;
};
StreamRegistry& Registry() {
  static StreamRegistry* r = new StreamRegistry();
  return *r;
}

// Runs q's queue until `point` operations have run.
void RunUntil(WorkQueue& q, uint64_t point) {
  std::lock_guard<std::mutex> lock(q.mu);
  while (q.run < point && !q.pending.empty()) {
    q.pending.front()();
    q.pending.pop_front();
    ++q.run;
  }
}

void RunAll(WorkQueue& q) {
  uint64_t point;
  {
    std::lock_guard<std::mutex> lock(q.mu);
    point = q.queued;
  }
  RunUntil(q, point);
}

// Runs op now on the default stream, or queues it on s.
void Issue(gpuStream_t s, std::function<void()> op) {
  if (s == nullptr) {
    op();
    return;
  }
  std::lock_guard<std::mutex> lock(s->q->mu);
  s->q->pending.push_back(std::move(op));
  ++s->q->queued;
}

bool Complete(Event& e) {
  if (!e.q) return true;
  std::lock_guard<std::mutex> lock(e.q->mu);
  return e.q->run >= e.point;
}

// Runs e's stream up to e and stamps its completion time.
void RunToEvent(Event& e) {
  std::lock_guard<std::mutex> lock(e.mu);
  if (e.q) RunUntil(*e.q, e.point);
  if (!e.timed) {
    e.timed = true;
    e.at = std::chrono::steady_clock::now();
  }
}

gpuError_t Fail(gpuError_t e, const char* what) {
  SetLastError(e, what);
  return e;
}

}  // namespace

void RunQueued(gpuStream_t s) {
  if (s != nullptr) RunAll(*s->q);
}

}  // namespace pg::gpu::emu

using namespace pg::gpu::emu;

gpuError_t gpuMemcpyAsync(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind, gpuStream_t s) {
  if (bytes == 0) return gpuSuccess;
  if (!CopyKindMatches(dst, src, bytes, kind))
    return Fail(gpuErrorInvalidValue, "memcpy async: pointers do not match the copy kind");
  Issue(s, [dst, src, bytes] { std::memmove(dst, src, bytes); });
  return gpuSuccess;
}

gpuError_t gpuMemsetAsync(void* p, int value, size_t bytes, gpuStream_t s) {
  if (bytes == 0) return gpuSuccess;
  if (!IsDeviceRange(p, bytes)) return Fail(gpuErrorInvalidValue, "memset of host memory");
  Issue(s, [p, value, bytes] { std::memset(p, value, bytes); });
  return gpuSuccess;
}

gpuError_t gpuStreamCreate(gpuStream_t* s) { return gpuStreamCreateWithFlags(s, 0); }

gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned) {
  *s = new Stream();
  StreamRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.queues.push_back((*s)->q);
  return gpuSuccess;
}

gpuError_t gpuStreamDestroy(gpuStream_t s) {
  if (!s) return Fail(gpuErrorInvalidValue, "destroy of a null stream");
  RunAll(*s->q);  // as a device does: queued work completes
  {
    StreamRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    std::erase(r.queues, s->q);
  }
  delete s;
  return gpuSuccess;
}

gpuError_t gpuStreamSynchronize(gpuStream_t s) {
  RunQueued(s);
  return gpuSuccess;
}

gpuError_t gpuDeviceSynchronize() {
  std::vector<std::shared_ptr<WorkQueue>> all;
  {
    StreamRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    all = r.queues;
  }
  for (auto& q : all) RunAll(*q);
  return gpuSuccess;
}

// Later work on s waits for e: the emulator runs e's stream up to e now.
gpuError_t gpuStreamWaitEvent(gpuStream_t, gpuEvent_t e, unsigned) {
  if (!e) return Fail(gpuErrorInvalidValue, "stream wait on a null event");
  RunToEvent(*e);
  return gpuSuccess;
}

gpuError_t gpuEventCreate(gpuEvent_t* e) {
  *e = new Event();
  return gpuSuccess;
}

gpuError_t gpuEventDestroy(gpuEvent_t e) {
  delete e;
  return gpuSuccess;
}

gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t s) {
  if (!e) return Fail(gpuErrorInvalidValue, "record of a null event");
  std::lock_guard<std::mutex> lock(e->mu);
  e->recorded = true;
  e->reported_not_ready = false;
  e->timed = false;
  e->q = s ? s->q : nullptr;
  bool done = true;
  if (s) {
    std::lock_guard<std::mutex> qlock(s->q->mu);
    e->point = s->q->queued;
    done = s->q->run >= e->point;
  }
  if (done) {  // nothing queued before it: complete now
    e->timed = true;
    e->at = std::chrono::steady_clock::now();
  }
  return gpuSuccess;
}

gpuError_t gpuEventSynchronize(gpuEvent_t e) {
  if (!e) return Fail(gpuErrorInvalidValue, "synchronize on a null event");
  RunToEvent(*e);
  return gpuSuccess;
}

// Not ready the first time it is asked about unfinished work (which then
// runs), so a poll loop ends and code that never polls or waits sees nothing.
gpuError_t gpuEventQuery(gpuEvent_t e) {
  if (!e) return Fail(gpuErrorInvalidValue, "query of a null event");
  {
    std::lock_guard<std::mutex> lock(e->mu);
    if (!Complete(*e) && !e->reported_not_ready) {
      e->reported_not_ready = true;
      return gpuErrorNotReady;
    }
  }
  RunToEvent(*e);
  return gpuSuccess;
}

gpuError_t gpuEventElapsedTime(float* ms, gpuEvent_t start, gpuEvent_t end) {
  if (!start || !end || !start->recorded || !end->recorded) return Fail(gpuErrorInvalidValue, "elapsed time");
  if (!Complete(*start) || !Complete(*end)) return gpuErrorNotReady;
  RunToEvent(*start);
  RunToEvent(*end);
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return gpuSuccess;
}
