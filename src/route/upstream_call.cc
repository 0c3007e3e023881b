#include "route/upstream_call.h"

namespace pg {

std::shared_ptr<UpstreamCall> UpstreamCall::Start(const std::string& base_url, const std::string& method,
                                                  const std::string& path, const httplib::Headers& headers,
                                                  const std::string& body, const std::string& content_type) {
  std::shared_ptr<UpstreamCall> call(new UpstreamCall());
  call->thread_ = std::thread(&UpstreamCall::Run, call.get(), base_url, method, path, headers, body, content_type);
  return call;
}

UpstreamCall::~UpstreamCall() {
  Cancel();
  thread_.join();
}

void UpstreamCall::Run(std::string base_url, std::string method, std::string path, httplib::Headers headers,
                       std::string body, std::string content_type) {
  httplib::Client cli(base_url);
  cli.set_connection_timeout(2);
  cli.set_tcp_nodelay(true);  // the body's last segment leaves at once, not after the replica's delayed ACK
  cli.set_read_timeout(600);
  cli.set_write_timeout(60);
  auto on_response = [this](const httplib::Response& r) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = r.status;
    response_headers_ = r.headers;
    headers_done_ = answered_ = true;
    cv_.notify_all();
    return !cancelled_;
  };
  auto on_data = [this](const char* data, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.emplace_back(data, n);
    cv_.notify_all();
    return !cancelled_;
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
  bool ok = cli.send(req, res, err);
  std::lock_guard<std::mutex> lock(mu_);
  failed_ = !ok;
  finished_ = headers_done_ = true;
  cv_.notify_all();
}

bool UpstreamCall::WaitHeaders() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return headers_done_; });
  return answered_;
}

std::string UpstreamCall::header(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = response_headers_.find(key);
  return it == response_headers_.end() ? "" : it->second;
}

httplib::Headers UpstreamCall::headers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return response_headers_;
}

bool UpstreamCall::NextChunk(std::string* chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !chunks_.empty() || finished_; });
  if (chunks_.empty()) return false;
  *chunk = std::move(chunks_.front());
  chunks_.pop_front();
  return true;
}

bool UpstreamCall::ReadAll(std::string* body) {
  std::string chunk;
  while (NextChunk(&chunk)) body->append(chunk);
  std::lock_guard<std::mutex> lock(mu_);
  return !failed_;
}

bool UpstreamCall::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void UpstreamCall::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

}  // namespace pg
