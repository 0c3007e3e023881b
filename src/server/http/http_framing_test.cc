// RFC 9112 framing checks (http_framing.h) on exact bytes, and GuardedStream
// refusing a request at the first byte that breaks them (socketpair). The
// same cases against the real `serve` and `route` binaries:
// tests/http_framing_test.cc.
#include "server/http/http_framing.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "server/http/guarded_stream.h"

namespace pg {
namespace {

// The headers' verdict: 0 when accepted, else the refusal's status.
int Verdict(const std::vector<std::string>& header_lines, std::string* message = nullptr) {
  RequestFraming f;
  if (auto e = f.AddRequestLine("POST /v1/completions HTTP/1.1\r\n")) return e->status;
  for (const std::string& line : header_lines) {
    if (auto e = f.AddHeaderLine(line)) {
      if (message) *message = e->message;
      return e->status;
    }
  }
  if (auto e = f.Check()) {
    if (message) *message = e->message;
    return e->status;
  }
  return 0;
}

TEST(RequestFraming, OneLengthOrChunkedIsAccepted) {
  EXPECT_EQ(Verdict({"Host: x\r\n", "Content-Length: 12\r\n"}), 0);
  EXPECT_EQ(Verdict({"content-length:   7  \r\n"}), 0);
  EXPECT_EQ(Verdict({"Transfer-Encoding: chunked\r\n"}), 0);
  EXPECT_EQ(Verdict({"transfer-encoding: Chunked\r\n"}), 0);
  EXPECT_EQ(Verdict({"Host: x\r\n"}), 0);  // no body
  RequestFraming f;
  ASSERT_FALSE(f.AddHeaderLine("Content-Length: 42\r\n"));
  ASSERT_FALSE(f.Check());
  EXPECT_EQ(f.content_length(), 42u);
  EXPECT_FALSE(f.chunked());
}

TEST(RequestFraming, DuplicateOrConflictingContentLengthIs400) {
  std::string m;
  EXPECT_EQ(Verdict({"Content-Length: 5\r\n", "Content-Length: 6\r\n"}, &m), 400);
  EXPECT_NE(m.find("more than one Content-Length"), std::string::npos) << m;
  EXPECT_EQ(Verdict({"Content-Length: 5\r\n", "content-length: 5\r\n"}), 400);
  EXPECT_EQ(Verdict({"Content-Length: 5, 5\r\n"}), 400);
  EXPECT_EQ(Verdict({"Content-Length: -1\r\n"}), 400);
  EXPECT_EQ(Verdict({"Content-Length: +5\r\n"}), 400);
  EXPECT_EQ(Verdict({"Content-Length: 0x10\r\n"}), 400);
  EXPECT_EQ(Verdict({"Content-Length: %31%30\r\n"}), 400);  // cpp-httplib URL-decodes header values
  EXPECT_EQ(Verdict({"Content-Length: \r\n"}), 400);        // cpp-httplib drops an empty value
  EXPECT_EQ(Verdict({"Content-Length: 99999999999999999999\r\n"}), 400);
}

TEST(RequestFraming, ContentLengthWithTransferEncodingIs400) {
  std::string m;
  EXPECT_EQ(Verdict({"Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n"}, &m), 400);
  EXPECT_NE(m.find("both Content-Length and Transfer-Encoding"), std::string::npos) << m;
  EXPECT_EQ(Verdict({"Transfer-Encoding: chunked\r\n", "Content-Length: 0\r\n"}), 400);
}

TEST(RequestFraming, OtherTransferCodingsAre501AndOddChunkedForms400) {
  std::string m;
  EXPECT_EQ(Verdict({"Transfer-Encoding: gzip, chunked\r\n"}, &m), 501);
  EXPECT_NE(m.find("'gzip' is not implemented"), std::string::npos) << m;
  EXPECT_EQ(Verdict({"Transfer-Encoding: identity\r\n"}), 501);
  EXPECT_EQ(Verdict({"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip\r\n"}), 501);
  EXPECT_EQ(Verdict({"Transfer-Encoding: chunked, chunked\r\n"}), 400);
  EXPECT_EQ(Verdict({"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked\r\n"}), 400);
  EXPECT_EQ(Verdict({"Transfer-Encoding: \r\n"}), 400);
  EXPECT_EQ(Verdict({"Transfer-Encoding: %63hunked\r\n"}), 501);
}

TEST(RequestFraming, MalformedHeaderLinesAre400) {
  EXPECT_EQ(Verdict({"Content-Length: 5\n"}), 400);                     // bare LF: cpp-httplib skips the line
  EXPECT_EQ(Verdict({"Content-Length : 5\r\n"}), 400);                  // space before the colon
  EXPECT_EQ(Verdict({"Host: x\r\n", " folded\r\n"}), 400);              // obsolete line folding
  EXPECT_EQ(Verdict({"NoColon\r\n"}), 400);                             // cpp-httplib skips the line
  EXPECT_EQ(Verdict({"X-A: 1\rTransfer-Encoding: chunked\r\n"}), 400);  // bare CR
  EXPECT_EQ(Verdict({std::string("X-A: a\0b\r\n", 10)}), 400);          // NUL in a value
  RequestFraming f;
  EXPECT_TRUE(f.AddRequestLine("GET / HTTP/1.1\n"));
}

// The chunked body's verdict: 0 when accepted and complete, -1 accepted so
// far, else the refusal's status.
int Chunked(const std::string& body, bool byte_at_a_time = false) {
  ChunkedBodyCheck c;
  if (byte_at_a_time) {
    for (char ch : body)
      if (auto e = c.Feed(&ch, 1)) return e->status;
  } else if (auto e = c.Feed(body.data(), body.size())) {
    return e->status;
  }
  return c.done() ? 0 : -1;
}

TEST(ChunkedBodyCheck, WellFormedBodiesPass) {
  for (bool bytewise : {false, true}) {
    EXPECT_EQ(Chunked("5\r\nhello\r\n0\r\n\r\n", bytewise), 0);
    EXPECT_EQ(Chunked("5;ext=1\r\nhello\r\nA \r\n0123456789\r\n000\r\n\r\n", bytewise), 0);
    EXPECT_EQ(Chunked("0\r\n\r\n", bytewise), 0);
    EXPECT_EQ(Chunked("5\r\nhel", bytewise), -1);
  }
}

TEST(ChunkedBodyCheck, MalformedChunkSizesAre400) {
  EXPECT_EQ(Chunked("-5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("zz\r\n"), 400);
  EXPECT_EQ(Chunked("0x5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked(" 5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("+5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("1000000000000000\r\n"), 400);  // 16 significant hex digits
  EXPECT_EQ(Chunked("FFFFFFFFFFFFFFFFFFFF\r\n"), 400);
  EXPECT_EQ(Chunked("000000000000000000005\r\nhello\r\n0\r\n\r\n"), 0);  // leading zeros are not overflow
  EXPECT_EQ(Chunked("5\nhello\r\n0\r\n\r\n"), 400);                      // bare LF
  EXPECT_EQ(Chunked("5 x\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("5;" + std::string(5000, 'e') + "\r\n"), 400);
}

TEST(ChunkedBodyCheck, DataThatOverrunsItsSizeOrTrailersAre400) {
  EXPECT_EQ(Chunked("5\r\nhelloXX\r\n0\r\n\r\n"), 400);  // cpp-httplib would end the body at "hello"
  EXPECT_EQ(Chunked("5\r\nhello\rX0\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n"), 400);
  EXPECT_EQ(Chunked("0\r\n\rX"), 400);
}

// GuardedStream over a socketpair: the request's bytes are read as
// cpp-httplib reads them (headers a byte at a time, then the body); the
// stream refuses at the first bad byte, with no wait.
struct StreamRun {
  GuardedStream::Limit limit;
  std::string read;  // what the parser got
  int status = 0;    // the framing error's status (kFraming)
};

StreamRun ReadRequest(const std::string& head, const std::string& body) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  const std::string all = head + body;
  EXPECT_EQ(::send(fds[1], all.data(), all.size(), 0), static_cast<ssize_t>(all.size()));  // the peer stays open
  StreamLimits l;
  l.max_body_bytes = 1 << 20;
  GuardedStream stream(fds[0], l);
  stream.BeginRequest();
  StreamRun run;
  char c;
  while (run.read.size() < head.size() && stream.read(&c, 1) == 1) run.read += c;
  if (!stream.limit_hit()) {
    stream.HeadersDone();
    std::vector<char> buf(4096);
    while (!stream.limit_hit() && run.read.size() < all.size()) {
      const ssize_t n = stream.read(buf.data(), buf.size());
      if (n <= 0) break;
      run.read.append(buf.data(), static_cast<size_t>(n));
    }
  }
  run.limit = stream.limit();
  if (run.limit == GuardedStream::Limit::kFraming) run.status = stream.framing_error().status;
  ::close(fds[0]);
  ::close(fds[1]);
  return run;
}

TEST(GuardedStreamFraming, RefusesAtTheBadByte) {
  using Limit = GuardedStream::Limit;
  StreamRun r = ReadRequest("POST / HTTP/1.1\r\nContent-Length : 5\r\n", "");
  EXPECT_EQ(r.limit, Limit::kFraming);
  EXPECT_EQ(r.read, "POST / HTTP/1.1\r\nContent-Length : 5\r");  // the line's LF is refused
  r = ReadRequest("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(r.limit, Limit::kFraming);
  EXPECT_EQ(r.status, 400);
  r = ReadRequest("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(r.limit, Limit::kFraming);
  EXPECT_EQ(r.status, 501);
  r = ReadRequest("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "hello");
  EXPECT_EQ(r.limit, Limit::kFraming);
  r = ReadRequest("POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", "x");
  EXPECT_EQ(r.limit, Limit::kBody);  // over max_body_bytes: refused before the body is read
}

TEST(GuardedStreamFraming, GoodRequestsReadWhole) {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  StreamRun r = ReadRequest(head, "5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(r.limit, GuardedStream::Limit::kNone);
  EXPECT_EQ(r.read, head + "5\r\nhello\r\n0\r\n\r\n");
  r = ReadRequest("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "hello");
  EXPECT_EQ(r.limit, GuardedStream::Limit::kNone);
}

}  // namespace
}  // namespace pg
