// GuardedStream: the transport under cpp-httplib's request parser for one
// accepted socket. It bounds what a client can make a worker thread wait
// for: the request line + headers must arrive within a deadline and a byte
// limit, the request line within its own length limit, the header lines
// within a count, the body within its own deadline, every read and write
// within a per-call timeout. The parser reads the request line and headers
// one byte at a time, so the limits are exact; which one stopped a request
// is kept (limit()) so the server can answer with the right 4xx. It also tells whether the peer has closed the
// connection, so a handler can cancel work for a client that is gone.
// It also holds the request to RFC 9112's framing (http_framing.h): every
// header line and every byte of a chunked body is checked as it is read, and
// a request whose framing is wrong or whose Content-Length is over the body
// limit is refused before its body is read (limit() kFraming or kBody).
//
// Thread-safety: owned and used by the one worker thread serving the
// socket. CurrentConnectionClosed() reads the stream of the calling thread.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "server/http/http_framing.h"

namespace pg {

// The header-line length cpp-httplib enforces itself (its
// CPPHTTPLIB_HEADER_MAX_LENGTH, fixed when the library was compiled).
inline constexpr int64_t kMaxHeaderLineBytes = 8192;
// Longest request line cpp-httplib accepts (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH,
// counted with its CRLF): the ceiling of --max-url-bytes.
inline constexpr int64_t kMaxRequestLineBytes = 8192;

struct StreamLimits {
  int64_t max_header_bytes = 64 << 10;  // request line + headers + blank line
  int64_t max_url_bytes = 8 << 10;      // request line with its CRLF, <= kMaxRequestLineBytes
  int64_t max_headers = 100;            // header lines
  // Body bytes as sent. cpp-httplib checks a Content-Length against the body
  // limit itself but reads chunked and length-less bodies without one; the
  // stream stops any body past 2 x max_body_bytes + 64 KiB of raw bytes
  // (room for chunk framing), the handler checks the decoded size exactly.
  int64_t max_body_bytes = 8 << 20;
  double header_timeout_s = 10;
  double body_timeout_s = 60;
  double read_timeout_s = 5;
  double write_timeout_s = 30;
};

class GuardedStream final : public httplib::Stream {
 public:
  enum class Phase { kHeaders, kBody, kHandling };
  // Why reading stopped early in this request (kNone: it did not).
  enum class Limit { kNone, kHeaderBytes, kHeaderCount, kHeaderLine, kUrl, kBody, kTimeout, kFraming };

  GuardedStream(int fd, const StreamLimits& limits);

  // A new request starts arriving now: header deadline and byte budget reset.
  void BeginRequest();
  // Headers parsed; the body (if any) follows under the body deadline. The
  // headers' framing is checked now: a problem, or a Content-Length over the
  // body limit, refuses the request (limit_hit(); reads fail from here on).
  void HeadersDone();
  // The request says how long its body is (Content-Length or chunked); a
  // request that says neither has no body (RFC 9112 6.3).
  bool body_framed() const { return framing_.chunked() || framing_.content_length().has_value(); }
  // The request announces body bytes (chunked, or a Content-Length over 0).
  bool has_body() const { return framing_.chunked() || framing_.content_length().value_or(0) > 0; }
  // Why the framing was refused (limit() == kFraming).
  const FramingError& framing_error() const { return framing_error_; }
  // Refuses the request for its framing: reads fail from here on.
  void RefuseFraming(FramingError error);
  // The handler runs; reads are no longer expected.
  void BeginHandling() { phase_ = Phase::kHandling; }

  // True when the peer has closed its side (EOF or error on a peek), or a
  // write has failed. Does not consume data.
  bool PeerClosed() const;
  // Input already read from the socket and not yet parsed (a pipelined request).
  bool HasBufferedInput() const { return off_ < len_; }
  // A read failed on a deadline or the header byte limit: the connection
  // must not be reused.
  bool limit_hit() const { return limit_ != Limit::kNone; }
  Limit limit() const { return limit_; }
  // Bytes written since BeginRequest (0: no response has started).
  int64_t bytes_written() const { return bytes_written_; }
  // The request could not be parsed: where the next one starts is unknown,
  // so the connection ends after the answer.
  void MarkUnparsable() { unparsable_ = true; }
  bool unparsable() const { return unparsable_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // The stream serving the calling worker thread, or nullptr.
  static GuardedStream* Current();
  static void SetCurrent(GuardedStream* stream);

 private:
  // Seconds to wait for input now: the per-read timeout, cut by the phase deadline.
  double ReadWaitSeconds() const;
  // Header phase: the limit that one more byte would break, or kNone.
  Limit HeaderLimitBeforeRead() const;
  // Header phase: accounts byte c; the limit it broke, or kNone.
  Limit CountHeaderByte(char c);
  // Header phase: adds byte c to the current line and checks a finished one.
  bool CheckHeaderByte(char c);

  int fd_;
  StreamLimits limits_;
  Phase phase_ = Phase::kHeaders;
  double deadline_s_ = 0;      // NowSeconds() bound for the current phase (0 = none)
  int64_t header_bytes_ = 0;   // bytes handed to the parser in this request's header phase
  int64_t header_lines_ = 0;   // '\n'-terminated lines among them (request line included)
  int64_t line_bytes_ = 0;     // bytes of the current, unfinished line
  int64_t bytes_written_ = 0;  // since BeginRequest
  int64_t body_bytes_ = 0;     // raw bytes read in this request's body phase
  std::vector<char> buf_;      // read buffer: [off_, len_) not yet handed out
  size_t off_ = 0, len_ = 0;
  mutable bool write_failed_ = false;
  Limit limit_ = Limit::kNone;
  bool unparsable_ = false;
  std::string line_;            // header phase: the current line so far
  RequestFraming framing_;      // this request's header lines
  ChunkedBodyCheck chunked_;    // this request's chunked body, as read
  bool check_chunked_ = false;  // the body is chunked and being checked
  FramingError framing_error_;
};

// Waits up to timeout_s for fd to become readable. Returns true if readable
// (or closed: a read will then return 0).
bool WaitReadable(int fd, double timeout_s);

}  // namespace pg
