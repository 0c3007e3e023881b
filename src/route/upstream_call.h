// UpstreamCall: one HTTP request to a replica, run on its own thread, whose
// response the router relays as it arrives. The caller first waits for the
// status and headers (WaitHeaders), so a replica that cannot be reached or
// drops the connection before answering can be retried on another one; then
// it either takes the whole body (non-streaming) or pulls chunks as they
// come (SSE). Cancel() (client gone) aborts the upstream request, so the
// replica cancels the generation.
//
// Thread-safety: the worker thread produces, one relaying thread consumes;
// every member is guarded by one mutex.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace pg {

class UpstreamCall {
 public:
  // Starts POST (or GET when `body` is null) `path` on `base_url`.
  static std::shared_ptr<UpstreamCall> Start(const std::string& base_url, const std::string& method,
                                             const std::string& path, const httplib::Headers& headers,
                                             const std::string& body, const std::string& content_type);
  ~UpstreamCall();

  // False when the replica did not answer (connection refused, reset or
  // timed out before the status line).
  bool WaitHeaders();
  int status() const { return status_; }
  std::string header(const std::string& key) const;
  httplib::Headers headers() const;  // every response header (after WaitHeaders)
  // Next chunk of the body; false at its end (or on failure / cancel).
  bool NextChunk(std::string* chunk);
  // The rest of the body (non-streaming); false if the transfer failed.
  bool ReadAll(std::string* body);
  void Cancel();
  // After NextChunk returned false: the transfer broke off (the replica died
  // or the connection failed) instead of ending.
  bool failed() const;

 private:
  UpstreamCall() = default;
  void Run(std::string base_url, std::string method, std::string path, httplib::Headers headers, std::string body,
           std::string content_type);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool headers_done_ = false, answered_ = false, finished_ = false, failed_ = false, cancelled_ = false;
  int status_ = 0;
  httplib::Headers response_headers_;
  std::deque<std::string> chunks_;
  std::thread thread_;
};

}  // namespace pg
