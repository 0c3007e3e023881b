#include "route/upstream_call.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "base/locked_copy.h"

namespace pg {
namespace {

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

std::shared_ptr<UpstreamCall> UpstreamCall::Start(const std::string& base_url, const std::string& method,
                                                  const std::string& path, const httplib::Headers& headers,
                                                  const std::string& body, const std::string& content_type,
                                                  const UpstreamLimits& limits) {
  std::shared_ptr<UpstreamCall> call(new UpstreamCall(limits));
  call->client_ = std::make_unique<httplib::Client>(base_url);
  httplib::Client& cli = *call->client_;
  cli.set_connection_timeout(2);
  cli.set_tcp_nodelay(true);  // the body's last segment leaves at once, not after the replica's delayed ACK
  // A backstop only: the deadlines are the consumer's (WaitHeaders, NextChunk), which shut the socket.
  const double backstop = std::max(limits.ttfb_s, limits.idle_s) + 5;
  cli.set_read_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(backstop)));
  cli.set_write_timeout(60);
  call->started_ = call->last_data_ = Clock::now();
  std::thread(&UpstreamCall::Run, call, method, path, headers, body, content_type).detach();
  // The caller's handle: when its last copy goes, the call is cancelled (the
  // worker keeps the object alive until it has ended).
  return std::shared_ptr<UpstreamCall>(call.get(), [keep = call](UpstreamCall* c) { c->Cancel(); });
}

UpstreamCall::~UpstreamCall() = default;

void UpstreamCall::Run(std::shared_ptr<UpstreamCall> self, std::string method, std::string path,
                       httplib::Headers headers, std::string body, std::string content_type) {
  UpstreamCall* c = self.get();
  auto on_response = [c](const httplib::Response& r) {
    std::lock_guard<std::mutex> lock(c->mu_);
    c->status_ = r.status;
    c->response_headers_ = r.headers;
    c->headers_done_ = c->answered_ = true;
    c->last_data_ = Clock::now();
    c->cv_.notify_all();
    return !c->cancelled_;
  };
  auto on_data = [c](const char* data, size_t n) {
    std::unique_lock<std::mutex> lock(c->mu_);
    c->cv_.wait(lock, [&] { return c->queued_bytes_ < kQueueBytes || c->cancelled_; });
    c->chunks_.emplace_back(data, n);
    c->queued_bytes_ += n;
    c->last_data_ = Clock::now();
    c->cv_.notify_all();
    return !c->cancelled_;
  };
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.headers = headers;
  if (method == "POST") {
    req.body = std::move(body);
    req.set_header("Content-Type", content_type.empty() ? "application/json" : content_type);
  }
  req.response_handler = on_response;
  req.content_receiver = [on_data](const char* data, size_t n, uint64_t, uint64_t) { return on_data(data, n); };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  bool ok = false;
  {
    std::unique_lock<std::mutex> lock(c->mu_);
    if (!c->cancelled_) {
      lock.unlock();
      ok = c->client_->send(req, res, err);
    }
  }
  std::lock_guard<std::mutex> lock(c->mu_);
  c->failed_ = c->failed_ || !ok;
  c->finished_ = c->headers_done_ = true;
  c->cv_.notify_all();
}

void UpstreamCall::StopLocked() {
  cancelled_ = true;
  cv_.notify_all();
  client_->stop();  // shuts the socket: the worker's read or write returns now
}

UpstreamCall::Outcome UpstreamCall::WaitHeaders() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, started_ + Seconds(limits_.ttfb_s), [&] { return headers_done_; })) {
    timed_out_ = failed_ = true;
    StopLocked();
    return Outcome::kTimedOut;
  }
  return answered_ ? Outcome::kOk : Outcome::kFailed;
}

std::string UpstreamCall::header(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = response_headers_.find(key);
  return it == response_headers_.end() ? "" : it->second;
}

httplib::Headers UpstreamCall::headers() const { return LockedCopy(mu_, response_headers_); }

bool UpstreamCall::NextChunk(std::string* chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!chunks_.empty() || finished_) break;
    if (cancelled_) return false;
    const Clock::time_point deadline = last_data_ + Seconds(limits_.idle_s);
    if (Clock::now() >= deadline) {  // the replica stayed silent too long
      timed_out_ = failed_ = true;
      StopLocked();
      return false;
    }
    cv_.wait_until(lock, deadline);
  }
  if (chunks_.empty()) return false;
  // The replica's silence is counted from when the router reads from it again.
  if (queued_bytes_ >= kQueueBytes) last_data_ = Clock::now();
  *chunk = std::move(chunks_.front());
  chunks_.pop_front();
  queued_bytes_ -= chunk->size();
  cv_.notify_all();
  return true;
}

UpstreamCall::Outcome UpstreamCall::ReadAll(std::string* body) {
  const std::string length = header("Content-Length");
  if (!length.empty()) {
    const int64_t n = std::atoll(length.c_str());
    if (n > limits_.max_body_bytes) {
      Cancel();
      return Outcome::kTooLarge;
    }
    if (n > 0) body->reserve(size_t(n));
  }
  std::string chunk;
  while (NextChunk(&chunk)) {
    if (int64_t(body->size() + chunk.size()) > limits_.max_body_bytes) {
      Cancel();
      return Outcome::kTooLarge;
    }
    body->append(chunk);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (timed_out_) return Outcome::kTimedOut;
  return failed_ ? Outcome::kFailed : Outcome::kOk;
}

bool UpstreamCall::failed() const { return LockedCopy(mu_, failed_); }

bool UpstreamCall::timed_out() const { return LockedCopy(mu_, timed_out_); }

void UpstreamCall::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_) StopLocked();
  cancelled_ = true;
  cv_.notify_all();
}

}  // namespace pg
