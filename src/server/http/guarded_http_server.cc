#include "server/http/guarded_http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "base/clock.h"
#include "base/log.h"
#include "server/common/api_error.h"
#include "server/http/http_limit_error.h"

namespace pg {
namespace {

thread_local bool t_reject_connection = false;

// httplib's thread pool, with a bound on connections waiting for a worker.
// Past it, the accepting thread answers 503 itself and closes the socket.
class BoundedTaskQueue final : public httplib::TaskQueue {
 public:
  BoundedTaskQueue(size_t threads, size_t max_pending) : pool_(threads), max_pending_(max_pending) {}
  void enqueue(std::function<void()> fn) override {
    if (pending_.load() >= max_pending_) {
      t_reject_connection = true;
      fn();  // process_and_close_socket sees the flag: writes 503 and closes
      t_reject_connection = false;
      return;
    }
    pending_.fetch_add(1);
    pool_.enqueue([this, fn = std::move(fn)] {
      fn();
      pending_.fetch_sub(1);
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  const size_t max_pending_;
  std::atomic<size_t> pending_{0};
};

// The request's headers are read: their framing is checked (GuardedStream::
// HeadersDone). cpp-httplib reads a body only for POST, PUT, PATCH and
// DELETE; another method's body would be read as the next request, so such
// a request with a body is refused. A refused request reaches no handler
// (its method matches no route, so httplib goes straight to the error
// answer) and gets no "100 Continue"; a request without Content-Length or
// chunked has no body (cpp-httplib would read one until the connection closes).
void FrameRequest(GuardedStream& stream, httplib::Request& req) {
  stream.HeadersDone();
  const bool reads_body =
      req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
  if (!stream.limit_hit() && !reads_body && stream.has_body())
    stream.RefuseFraming({400, "a " + req.method + " request may not carry a body", "bad_framing"});
  if (stream.limit_hit()) {
    req.method = "REFUSED";
    req.headers.erase("Expect");
  } else if (!stream.body_framed()) {
    req.set_header("Content-Length", "0");
  }
}

StreamLimits LimitsOf(const ServerOptions& o) {
  return StreamLimits{o.max_header_bytes, o.max_url_bytes,  o.max_headers,    o.max_body_bytes,
                      o.header_timeout_s, o.body_timeout_s, o.read_timeout_s, o.write_timeout_s};
}

}  // namespace

GuardedHttpServer::GuardedHttpServer(const ServerOptions& options) : options_(options), limits_(LimitsOf(options)) {}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  bool ret = false;
  if (t_reject_connection) {
    (void)!::send(sock, busy_answer_.data(), busy_answer_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } else {
    GuardedStream stream(sock, limits_);
    GuardedStream::SetCurrent(&stream);
    for (int left = options_.keep_alive_max_requests; left > 0; --left) {
      if (!WaitForRequest(stream)) break;
      stream.BeginRequest();
      bool connection_closed = false;
      try {
        ret = process_request(stream, left == 1, connection_closed,
                              [&stream](httplib::Request& req) { FrameRequest(stream, req); });
      } catch (const std::exception& e) {
        // httplib runs a response's content provider (every stream) outside
        // its handler try/catch: a throw there would end the process. It
        // ends this connection instead; the stream stops where it was.
        PG_LOG_ERROR("connection fd {}: response writer threw: {}", sock, e.what());
        break;
      }
      PG_LOG_DEBUG("connection fd {}: request done ok={} closed={} limit_hit={} peer_closed={}", sock, ret,
                   connection_closed, stream.limit_hit(), stream.PeerClosed());
      if (stream.limit_hit() && stream.bytes_written() == 0 && limit_answer_) {
        const std::string answer = limit_answer_(stream);
        (void)!stream.write(answer.data(), answer.size());
      }
      if (!ret || connection_closed || stream.limit_hit() || stream.unparsable()) break;
    }
    GuardedStream::SetCurrent(nullptr);
    if (stream.limit_hit() || stream.unparsable()) DrainBeforeClose(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

void GuardedHttpServer::DrainBeforeClose(int sock) const {
  // The answer is sent; FIN tells the client nothing more comes. Closing with
  // unread input would send a reset, and a client still sending its body
  // (most send it whole before reading) would lose the answer to it.
  ::shutdown(sock, SHUT_WR);
  char buf[16384];
  int64_t left = kMaxDrainBytes;
  const double until = NowSeconds() + options_.body_timeout_s;
  while (left > 0 && NowSeconds() < until && WaitReadable(sock, options_.read_timeout_s)) {
    const ssize_t n = ::recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;  // the client closed or reset
    if (n > 0) left -= n;
  }
}

bool GuardedHttpServer::WaitForRequest(const GuardedStream& stream) {
  if (stream.HasBufferedInput()) return true;
  for (double waited = 0; waited < options_.keep_alive_timeout_s; waited += 0.1) {
    if (svr_sock_ == INVALID_SOCKET) return false;
    if (WaitReadable(stream.socket(), 0.1)) return true;
  }
  return false;
}

void GuardedHttpServer::InstallErrorAnswers(ErrorWriter write_error, std::function<void(const ApiError&)> on_raw_error,
                                            ErrorBody raw_body) {
  write_error_ = write_error;
  const ApiError busy = ServiceUnavailable("server busy: too many connections");
  busy_answer_ = RawErrorResponse(busy, raw_body(busy));
  // A request a stream limit stopped gets the error that names the limit.
  limit_answer_ = [this, on_raw_error, raw_body](const GuardedStream& stream) {
    ApiError e = StreamError(stream, options_);
    if (on_raw_error) on_raw_error(e);
    return RawErrorResponse(e, raw_body(e));
  };
  // Errors httplib produces itself (no route, 413, malformed request) get an
  // API error body; responses that already carry one are left alone.
  set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (GuardedStream* conn = GuardedStream::Current(); conn && conn->limit_hit()) {
      res.set_header("Connection", "close");  // the connection ends after this answer
      return write_error_(req, res, StreamError(*conn, options_));
    }
    ApiError e;
    switch (res.status) {
      case 404: e = NotFoundError("no route for " + req.method + " " + req.path, "unknown_route"); break;
      case 413:
        e = req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0
                ? FormBodyTooLargeError()
                : BodyTooLargeError(options_);
        break;
      case 414: e = StreamLimitError(GuardedStream::Limit::kUrl, options_); break;
      case 400:
        e = BadRequest("malformed HTTP request");
        res.set_header("Connection", "close");
        if (GuardedStream* conn = GuardedStream::Current()) conn->MarkUnparsable();
        break;
      default:
        e = ServerError("HTTP error " + std::to_string(res.status));
        e.http_status = res.status;
        break;
    }
    write_error_(req, res, e);
  });
  set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    write_error_(req, res, ServerError("internal error"));
  });
}

void GuardedHttpServer::RefuseOtherMethods(const char* path, const char* allow, const Handler& refuse) {
  const std::string a = allow;
  if (a != "GET") Get(path, refuse);
  if (a != "POST") Post(path, refuse);
  Put(path, refuse);
  Patch(path, refuse);
  Delete(path, refuse);
  Options(path, refuse);
}

bool GuardedHttpServer::BeginHandling(const httplib::Request& req, httplib::Response& res) {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  if (static_cast<int64_t>(req.body.size()) <= options_.max_body_bytes) return true;
  write_error_(req, res, BodyTooLargeError(options_));
  return false;
}

Result<int> GuardedHttpServer::Bind() {
  PG_RETURN_IF_ERROR(options_.Validate());
  const size_t threads = static_cast<size_t>(options_.threads);
  new_task_queue = [threads] { return new BoundedTaskQueue(threads, threads * 2); };
  set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  set_keep_alive_max_count(static_cast<size_t>(options_.keep_alive_max_requests));
  set_tcp_nodelay(true);
  int port = -1;
  if (options_.port == 0) {
    port = bind_to_any_port(options_.host);
  } else {
    port = bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port <= 0) {
    return IoError("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                   " (address in use or not local?)");
  }
  // httplib listens with a backlog of 5, which drops connections when many
  // clients connect at once; listen() again on the bound socket raises it.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, 1024);
  return port;
}

}  // namespace pg
