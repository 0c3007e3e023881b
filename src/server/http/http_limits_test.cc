// The HTTP-level request limits: GuardedStream stops reading the request line
// and headers at the exact limit and says which (socketpair, read a byte at a
// time as cpp-httplib's parser does); each limit maps to its 4xx naming the
// flag; ServerOptions::Validate checks the ranges. The whole path through the
// real server is tests/serve_front_door_test.cc.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "server/common/api_error.h"
#include "server/http/guarded_stream.h"
#include "server/http/http_limit_error.h"
#include "server/http/server_options.h"

namespace pg {
namespace {

using Limit = GuardedStream::Limit;

// Feeds `input` to a GuardedStream in its header phase and reads it a byte at
// a time until the stream refuses or the input ends. Returns the bytes read.
std::string ReadHeaders(const std::string& input, const StreamLimits& limits, Limit* limit) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_EQ(::send(fds[1], input.data(), input.size(), 0), static_cast<ssize_t>(input.size()));
  ::shutdown(fds[1], SHUT_WR);
  GuardedStream stream(fds[0], limits);
  stream.BeginRequest();
  std::string got;
  char c;
  while (stream.read(&c, 1) == 1) got += c;
  *limit = stream.limit();
  ::close(fds[0]);
  ::close(fds[1]);
  return got;
}

StreamLimits Small() {
  StreamLimits l;
  l.max_header_bytes = 1024;
  l.max_url_bytes = 64;
  l.max_headers = 3;
  return l;
}

TEST(HttpLimits, HeadersWithinEveryLimitPass) {
  const std::string req = "GET /health HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
  Limit limit;
  EXPECT_EQ(ReadHeaders(req, Small(), &limit), req);
  EXPECT_EQ(limit, Limit::kNone);
}

TEST(HttpLimits, OneHeaderTooManyIsRefused) {
  Limit limit;
  std::string got = ReadHeaders("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", Small(), &limit);
  EXPECT_EQ(limit, Limit::kHeaderCount);
  EXPECT_EQ(got, "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n");  // stopped at the first byte of the 4th
}

TEST(HttpLimits, RequestLineAtTheLimitPassesOneByteMoreIsRefused) {
  // 64 bytes with the CRLF.
  std::string line = "GET /" + std::string(64 - 16, 'u') + " HTTP/1.1\r\n";
  ASSERT_EQ(line.size(), 64u);
  Limit limit;
  ReadHeaders(line + "\r\n", Small(), &limit);
  EXPECT_EQ(limit, Limit::kNone);
  line = "GET /" + std::string(64 - 15, 'u') + " HTTP/1.1\r\n";
  std::string got = ReadHeaders(line + "\r\n", Small(), &limit);
  EXPECT_EQ(limit, Limit::kUrl);
  EXPECT_EQ(got.size(), 64u);
}

TEST(HttpLimits, HeaderBytesAndHeaderLineLength) {
  Limit limit;
  StreamLimits l = Small();
  std::string got = ReadHeaders("GET / HTTP/1.1\r\nA: " + std::string(2000, 'a') + "\r\n\r\n", l, &limit);
  EXPECT_EQ(limit, Limit::kHeaderBytes);
  EXPECT_EQ(got.size(), 1024u);
  l.max_header_bytes = 64 << 10;
  ReadHeaders("GET / HTTP/1.1\r\nA: " + std::string(kMaxHeaderLineBytes, 'a') + "\r\n\r\n", l, &limit);
  EXPECT_EQ(limit, Limit::kHeaderLine);
}

TEST(HttpLimits, RawBodyBytesAreBoundedEvenWithoutALength) {
  StreamLimits l;
  l.max_body_bytes = 1024;
  const int64_t bound = 2 * l.max_body_bytes + (64 << 10);  // room for chunk framing
  const std::string body(static_cast<size_t>(bound) + 5000, 'b');
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  GuardedStream stream(fds[0], l);
  stream.BeginRequest();
  stream.HeadersDone();
  int64_t got = 0;
  std::vector<char> buf(4096);
  size_t sent = 0;
  for (;;) {
    if (sent < body.size()) {
      ssize_t n = ::send(fds[1], body.data() + sent, std::min<size_t>(8192, body.size() - sent), MSG_DONTWAIT);
      if (n > 0) sent += static_cast<size_t>(n);
    }
    ssize_t n = stream.read(buf.data(), buf.size());
    if (n <= 0) break;
    got += n;
  }
  EXPECT_EQ(stream.limit(), Limit::kBody);
  EXPECT_EQ(got, bound);
  ::close(fds[0]);
  ::close(fds[1]);
}

// A request that stops half-sent, the connection still open: the per-read
// timeout ends it as a timeout (the 400 request_timeout), not as a request
// the parser could not read ("malformed"), in the header and the body phase.
TEST(HttpLimits, AStalledRequestIsATimeout) {
  StreamLimits l;
  l.read_timeout_s = 0.05;
  for (bool body : {false, true}) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    const std::string part = body ? "{\"prompt\"" : "POST /v1/completions HTTP/1.1\r\nHost: x\r\n";
    ASSERT_EQ(::send(fds[1], part.data(), part.size(), 0), static_cast<ssize_t>(part.size()));
    GuardedStream stream(fds[0], l);
    stream.BeginRequest();
    if (body) stream.HeadersDone();
    char c;
    size_t got = 0;
    while (stream.read(&c, 1) == 1) ++got;
    EXPECT_EQ(got, part.size());
    EXPECT_EQ(stream.limit(), Limit::kTimeout) << (body ? "body" : "headers");
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

TEST(HttpLimits, EachLimitHasItsStatusAndNamesItsFlag) {
  ServerOptions o;
  struct Case {
    Limit limit;
    int status;
    const char* text;
  } cases[] = {{Limit::kHeaderBytes, 431, "--max-header-bytes"}, {Limit::kHeaderCount, 431, "--max-headers"},
               {Limit::kHeaderLine, 431, "8192 bytes"},          {Limit::kUrl, 414, "--max-url-bytes"},
               {Limit::kBody, 413, "--max-body-bytes"},          {Limit::kTimeout, 400, "did not arrive in time"}};
  for (const Case& c : cases) {
    ApiError e = StreamLimitError(c.limit, o);
    EXPECT_EQ(e.http_status, c.status) << c.text;
    EXPECT_NE(e.message.find(c.text), std::string::npos) << e.message;
    const std::string raw = RawErrorResponse(e, nlohmann::json{{"error", {{"message", e.message}}}}.dump());
    EXPECT_EQ(raw.rfind("HTTP/1.1 " + std::to_string(c.status) + " ", 0), 0u) << raw;
    EXPECT_NE(raw.find("Connection: close\r\n"), std::string::npos);
    const std::string body = raw.substr(raw.find("\r\n\r\n") + 4);
    EXPECT_NE(raw.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(body)["error"]["message"], e.message);
  }
  EXPECT_NE(BodyTooLargeError(o).message.find("--max-body-bytes"), std::string::npos);
  EXPECT_EQ(BodyTooLargeError(o).http_status, 413);
}

TEST(HttpLimits, ValidateChecksEveryRangeAndNamesTheFlag) {
  EXPECT_TRUE(ServerOptions().Validate().ok());
  struct Case {
    void (*set)(ServerOptions&);
    const char* flag;
  } cases[] = {
      {[](ServerOptions& o) { o.max_headers = 0; }, "--max-headers"},
      {[](ServerOptions& o) { o.max_url_bytes = kMaxRequestLineBytes + 1; }, "--max-url-bytes"},
      {[](ServerOptions& o) { o.max_header_bytes = 100; }, "--max-header-bytes"},
      {[](ServerOptions& o) { o.max_body_bytes = 10; }, "--max-body-bytes"},
      {[](ServerOptions& o) { o.limits.max_json_depth = 1; }, "--max-json-depth"},
      {[](ServerOptions& o) { o.limits.max_messages = 0; }, "--max-messages"},
      {[](ServerOptions& o) { o.limits.max_tools = -1; }, "--max-tools"},
      {[](ServerOptions& o) { o.limits.max_stop = -1; }, "--max-stop"},
      {[](ServerOptions& o) { o.limits.max_logit_bias = -1; }, "--max-logit-bias"},
      {[](ServerOptions& o) {
         o.max_header_bytes = 2048;
         o.max_url_bytes = 4096;
       },
       "--max-url-bytes"},
  };
  for (const Case& c : cases) {
    ServerOptions o;
    c.set(o);
    Status st = o.Validate();
    ASSERT_FALSE(st.ok()) << c.flag;
    EXPECT_NE(st.message().find(c.flag), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace pg
