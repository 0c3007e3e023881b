#include "server/http/guarded_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/clock.h"

namespace pg {
namespace {

thread_local GuardedStream* t_current_stream = nullptr;

bool PollFor(int fd, short events, double timeout_s) {
  int ms = static_cast<int>(std::max(0.0, timeout_s) * 1000.0);
  struct pollfd p {};
  p.fd = fd;
  p.events = events;
  for (;;) {
    int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

void AddressOf(const sockaddr_storage& addr, std::string* ip, int* port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    *port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    *port = ntohs(a->sin6_port);
  }
  *ip = buf;
}

}  // namespace

bool WaitReadable(int fd, double timeout_s) { return PollFor(fd, POLLIN, timeout_s); }

GuardedStream::GuardedStream(int fd, const StreamLimits& limits) : fd_(fd), limits_(limits), buf_(16384) {}

void GuardedStream::BeginRequest() {
  phase_ = Phase::kHeaders;
  header_bytes_ = 0;
  header_lines_ = 0;
  line_bytes_ = 0;
  bytes_written_ = 0;
  deadline_s_ = NowSeconds() + limits_.header_timeout_s;
  line_.clear();
  framing_ = RequestFraming();
  chunked_ = ChunkedBodyCheck();
  check_chunked_ = false;
}

void GuardedStream::HeadersDone() {
  phase_ = Phase::kBody;
  body_bytes_ = 0;
  deadline_s_ = NowSeconds() + limits_.body_timeout_s;
  if (limit_hit()) return;
  if (std::optional<FramingError> e = framing_.Check()) {
    RefuseFraming(std::move(*e));
  } else if (framing_.content_length().value_or(0) > static_cast<uint64_t>(limits_.max_body_bytes)) {
    limit_ = Limit::kBody;  // answered now; the body is not read
  } else {
    check_chunked_ = framing_.chunked();
  }
}

void GuardedStream::RefuseFraming(FramingError error) {
  framing_error_ = std::move(error);
  limit_ = Limit::kFraming;
}

bool GuardedStream::CheckHeaderByte(char c) {
  line_ += c;
  if (c != '\n') return true;
  std::optional<FramingError> e;
  if (header_lines_ == 1) {
    e = framing_.AddRequestLine(line_);
  } else {
    e = framing_.AddHeaderLine(line_);
  }
  line_.clear();
  if (e) RefuseFraming(std::move(*e));
  return !e;
}

double GuardedStream::ReadWaitSeconds() const {
  double wait = limits_.read_timeout_s;
  if (phase_ != Phase::kHandling && deadline_s_ > 0) wait = std::min(wait, deadline_s_ - NowSeconds());
  return wait;
}

bool GuardedStream::PeerClosed() const {
  if (write_failed_) return true;
  if (off_ < len_) return false;  // unread input: the peer was alive
  char c;
  ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;
  if (n < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  return false;
}

bool GuardedStream::is_readable() const {
  if (off_ < len_) return true;
  double wait = ReadWaitSeconds();
  return wait > 0 && PollFor(fd_, POLLIN, wait);
}

bool GuardedStream::is_writable() const {
  if (write_failed_) return false;
  return PollFor(fd_, POLLOUT, limits_.write_timeout_s) && !PeerClosed();
}

GuardedStream::Limit GuardedStream::HeaderLimitBeforeRead() const {
  if (header_bytes_ >= limits_.max_header_bytes) return Limit::kHeaderBytes;
  if (header_lines_ == 0 && line_bytes_ >= limits_.max_url_bytes) return Limit::kUrl;
  if (header_lines_ > 0 && line_bytes_ >= kMaxHeaderLineBytes) return Limit::kHeaderLine;
  return Limit::kNone;
}

GuardedStream::Limit GuardedStream::CountHeaderByte(char c) {
  ++header_bytes_;
  if (c == '\n') {
    ++header_lines_;
    line_bytes_ = 0;
    return Limit::kNone;
  }
  ++line_bytes_;
  // After the request line and max_headers header lines only the blank line may come.
  if (header_lines_ > limits_.max_headers && c != '\r') return Limit::kHeaderCount;
  return Limit::kNone;
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
  if (limit_hit() && phase_ != Phase::kHandling) return -1;  // the request is refused: nothing more of it is read
  if (phase_ == Phase::kHeaders) {
    // The parser reads the request line and headers a byte at a time; take
    // one byte per call so every header limit holds exactly.
    if (Limit l = HeaderLimitBeforeRead(); l != Limit::kNone) {
      limit_ = l;
      return -1;
    }
    size = std::min<size_t>(size, 1);
  } else if (phase_ == Phase::kBody) {
    const int64_t budget = 2 * limits_.max_body_bytes + (64 << 10) - body_bytes_;
    if (budget <= 0) {
      limit_ = Limit::kBody;
      return -1;
    }
    size = std::min<size_t>(size, static_cast<size_t>(budget));
  }
  if (off_ >= len_) {
    if (phase_ != Phase::kHandling && deadline_s_ > 0 && NowSeconds() > deadline_s_) {
      limit_ = Limit::kTimeout;
      return -1;
    }
    if (!is_readable()) {
      // Nothing came within the per-read timeout or the phase deadline: a
      // request that stalled half-sent is a timeout (not a malformed request).
      if (phase_ != Phase::kHandling) limit_ = Limit::kTimeout;
      return -1;
    }
    ssize_t n;
    do {
      n = ::recv(fd_, buf_.data(), buf_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    off_ = 0;
    len_ = static_cast<size_t>(n);
  }
  size_t n = std::min(size, len_ - off_);
  std::memcpy(ptr, buf_.data() + off_, n);
  off_ += n;
  if (phase_ == Phase::kBody) {
    body_bytes_ += static_cast<int64_t>(n);
    if (check_chunked_) {
      if (std::optional<FramingError> e = chunked_.Feed(ptr, n)) {
        RefuseFraming(std::move(*e));
        return -1;
      }
    }
  }
  if (phase_ == Phase::kHeaders && n > 0) {
    if (Limit l = CountHeaderByte(ptr[0]); l != Limit::kNone) {
      limit_ = l;
      return -1;
    }
    if (!CheckHeaderByte(ptr[0])) return -1;
  }
  return static_cast<ssize_t>(n);
}

ssize_t GuardedStream::write(const char* ptr, size_t size) {
  if (write_failed_ || !PollFor(fd_, POLLOUT, limits_.write_timeout_s)) {
    write_failed_ = true;
    return -1;
  }
  ssize_t n;
  do {
    n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) write_failed_ = true;
  if (n > 0) bytes_written_ += n;
  return n;
}

void GuardedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = -1;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, &ip, &port);
}

void GuardedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = -1;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, &ip, &port);
}

GuardedStream* GuardedStream::Current() { return t_current_stream; }
void GuardedStream::SetCurrent(GuardedStream* stream) { t_current_stream = stream; }

}  // namespace pg
