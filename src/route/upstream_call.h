// UpstreamCall: one HTTP request to a replica, run on its own thread, whose
// response the router relays as it arrives. The caller first waits for the
// status and headers (WaitHeaders), so a replica that cannot be reached,
// drops the connection or stays silent before answering can be retried on
// another one; then it either takes the whole body (ReadAll, under a size
// limit) or pulls chunks as they come (SSE). Cancel() (client gone, or a
// deadline missed) shuts the connection, so the replica cancels the
// generation and the worker thread ends at once.
//
// Deadlines (UpstreamLimits): the status line must arrive within ttfb_s of
// the start (a non-streamed answer is sent whole, so this bounds its whole
// generation), and once it has, the replica may stay silent at most idle_s
// between two pieces of the body. A missed deadline ends the call as
// kTimedOut. Memory: a body's chunks wait in a queue of at most
// kQueueBytes (the worker stops reading from the replica while it is full),
// and ReadAll keeps at most max_body_bytes.
//
// Thread-safety: the worker thread produces, one relaying thread consumes;
// every member is guarded by one mutex. The worker holds the call alive
// (it is detached), so dropping the last handle never blocks.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace pg {

struct UpstreamLimits {
  double ttfb_s = 300;                         // status line after the request started
  double idle_s = 120;                         // silence between two pieces of the body
  int64_t max_body_bytes = int64_t{64} << 20;  // ReadAll's bound
};

class UpstreamCall {
 public:
  static constexpr size_t kQueueBytes = 1 << 20;

  enum class Outcome { kOk, kFailed, kTimedOut, kTooLarge };

  // Starts POST (or GET, ...) `path` on `base_url`.
  static std::shared_ptr<UpstreamCall> Start(const std::string& base_url, const std::string& method,
                                             const std::string& path, const httplib::Headers& headers,
                                             const std::string& body, const std::string& content_type,
                                             const UpstreamLimits& limits);
  ~UpstreamCall();

  // kOk when the status line and headers came; kFailed when the replica
  // did not answer (refused, reset); kTimedOut past ttfb_s.
  Outcome WaitHeaders();
  int status() const { return status_; }
  std::string header(const std::string& key) const;
  httplib::Headers headers() const;  // every response header (after WaitHeaders)
  // Next chunk of the body; false at its end (or on failure, a missed idle
  // deadline, or cancel).
  bool NextChunk(std::string* chunk);
  // The rest of the body (non-streaming), at most limits.max_body_bytes.
  Outcome ReadAll(std::string* body);
  void Cancel();
  // After NextChunk returned false: the transfer broke off (the replica died,
  // the connection failed, or it stayed silent past idle_s) instead of ending.
  bool failed() const;
  bool timed_out() const;

 private:
  using Clock = std::chrono::steady_clock;
  explicit UpstreamCall(const UpstreamLimits& limits) : limits_(limits) {}
  static void Run(std::shared_ptr<UpstreamCall> self, std::string method, std::string path, httplib::Headers headers,
                  std::string body, std::string content_type);
  void StopLocked();  // mu_ held

  const UpstreamLimits limits_;
  std::unique_ptr<httplib::Client> client_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // consumer: data, headers or the end; worker: room in the queue
  bool headers_done_ = false, answered_ = false, finished_ = false, failed_ = false, cancelled_ = false;
  bool timed_out_ = false;
  int status_ = 0;
  httplib::Headers response_headers_;
  std::deque<std::string> chunks_;
  size_t queued_bytes_ = 0;
  Clock::time_point started_, last_data_;
};

}  // namespace pg
