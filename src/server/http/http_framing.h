// HTTP/1.1 message framing checks (RFC 9112), applied to the raw bytes of a
// request before cpp-httplib parses them. cpp-httplib 0.11 is lenient where
// a front proxy may not be: it skips header lines without CRLF or without a
// colon, URL-decodes header values, takes the first of two Content-Length
// headers, ignores Content-Length when Transfer-Encoding says chunked, reads
// a chunk size with strtoul (a sign, "0x", blanks pass) and ends a chunked
// body early on a bad chunk end. Any of these lets one request's bytes be
// read as two requests by one reader and one by another (request
// smuggling). GuardedStream feeds every header line to RequestFraming and
// every chunked body byte to ChunkedBodyCheck; a problem ends the request
// with the 400 (or 501) named here and the connection is closed.
//
// Plain value types, no I/O; one instance per request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg {

struct FramingError {
  int status = 400;  // 400, or 501 for a transfer coding other than chunked
  std::string message;
  std::string code;  // "bad_framing" | "unsupported_transfer_coding"
};

// What the header lines of one request say about its body.
class RequestFraming {
 public:
  // The request line, with its line end: it must end in CRLF.
  std::optional<FramingError> AddRequestLine(std::string_view line);
  // One header line, with its line end (CRLF): the field name is a token
  // followed directly by ':', no line folding, no bare CR, no control
  // character in the value. Content-Length and Transfer-Encoding are kept.
  std::optional<FramingError> AddHeaderLine(std::string_view line);
  // After the blank line: a single Content-Length of digits, or a single
  // Transfer-Encoding of exactly "chunked", never both (400); a transfer
  // coding other than chunked is 501.
  std::optional<FramingError> Check() const;

  bool chunked() const { return !transfer_encodings_.empty(); }
  // The announced length (valid once Check() passed); nullopt: none given.
  std::optional<uint64_t> content_length() const { return content_length_; }

 private:
  int content_length_lines_ = 0;
  std::string content_length_raw_;  // the first Content-Length value, trimmed
  std::optional<uint64_t> content_length_;
  std::vector<std::string> transfer_encodings_;  // each Transfer-Encoding value, trimmed
};

// A chunked body as it is read (RFC 9112 7.1): chunk-size is 1*HEXDIG (at
// most 15 significant digits), then optional extensions, CRLF, the data,
// CRLF; the last chunk is "0" and the body ends with a CRLF right after it
// (cpp-httplib does not read trailer fields, so they are refused here).
class ChunkedBodyCheck {
 public:
  // Checks the next `n` bytes of the body; the first problem, or nullopt.
  std::optional<FramingError> Feed(const char* data, size_t n);
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kSize, kSizeTail, kExt, kSizeLf, kData, kDataCr, kDataLf, kEndCr, kEndLf, kDone };
  std::optional<FramingError> Step(char c);
  // A state that takes exactly one byte: c must be `want` (else `error`), then `next`.
  std::optional<FramingError> Expect(char c, char want, State next, const char* error);

  State state_ = State::kSize;
  uint64_t size_ = 0;       // the chunk size being read, then the data bytes left
  int digits_ = 0;          // significant hex digits of the size
  int64_t line_bytes_ = 0;  // bytes of the current size line
};

}  // namespace pg
