// Issue 50, HTTP framing by RFC 9112, against the real binaries: a `prosgrow
// serve` replica (tiny synthetic model, an API key) and `prosgrow route` in
// front of it, both driven over raw sockets with exact bytes. Every case runs
// on both doors (they share GuardedHttpServer, src/server). The byte-level
// rules are unit-tested in src/server/http/http_framing_test.cc.
//   * conflicting or duplicate Content-Length, Content-Length with
//     Transfer-Encoding, malformed header lines and chunk sizes: one 400
//     naming the problem, nothing after it read as a request, and the
//     connection closed;
//   * a transfer coding other than chunked: 501;
//   * a request without a length has no body: what follows is the next request;
//   * a 20 MiB body over the limit: the client sends it all (no broken pipe)
//     and reads the whole 413;
//   * "Authorization: bearer KEY" in any case of the scheme.
// Conditions are awaited; the poll bound only ends a hang.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "testing/http_test_util.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::ServeProcess;

constexpr char kKey[] = "sk-framing-test-key";

struct Answer {
  std::vector<int> statuses;  // one per response, in order
  std::vector<std::string> bodies;
  bool closed = false;   // the server closed the connection after them
  bool sent_all = true;  // every byte of the request was sent (no reset or broken pipe)
};

// Splits the bytes read into responses (each with a Content-Length).
void Parse(const std::string& got, Answer* a) {
  size_t at = 0;
  while (got.compare(at, 9, "HTTP/1.1 ") == 0) {
    const size_t end = got.find("\r\n\r\n", at);
    if (end == std::string::npos) return;
    std::string head = got.substr(at, end - at);
    a->statuses.push_back(std::stoi(head.substr(9, 3)));
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t cl = head.find("\r\ncontent-length: ");
    const size_t n = cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 18));
    a->bodies.push_back(got.substr(end + 4, n));
    at = end + 4 + n;
  }
}

// Sends `request` and reads until the server closes (or 30 s pass without a
// byte: a hang, reported as not closed). With `send_first` the whole request
// is written before reading, as most clients write a body.
Answer Talk(int port, const std::string& request, bool send_first = false) {
  Answer a;
  const int fd = testing::ConnectLoopback(port);
  if (fd < 0) return a;
  std::thread sender;
  if (send_first) {
    a.sent_all = testing::SendAll(fd, request);
  } else {
    sender = std::thread([fd, &request, &a] { a.sent_all = testing::SendAll(fd, request); });
  }
  std::string got;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      a.closed = n == 0;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  ::shutdown(fd, SHUT_RDWR);
  if (sender.joinable()) sender.join();
  ::close(fd);
  Parse(got, &a);
  return a;
}

std::string ErrorCode(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "";
  return j["error"].value("code", "");
}

const std::string kHead = std::string("POST /v1/completions HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ") + kKey +
                          "\r\nContent-Type: application/json\r\n";
const std::string kBody = R"({"prompt":"hi","max_tokens":1})";
// Sent after a refused request: the server must not read it as a request.
const std::string kSmuggled = "GET /health HTTP/1.1\r\nHost: t\r\n\r\n";

std::string Hex(size_t n) {
  char s[32];
  std::snprintf(s, sizeof(s), "%zx", n);
  return s;
}

class HttpFraming : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("pg_http_framing_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string model = (dir_ / "tiny.gguf").string();
    const Status made = testing::MakeTinyModel(PROSGROW_BINARY, model);
    ASSERT_TRUE(made.ok()) << made.ToString();
    auto serve = ServeProcess::Start(PROSGROW_BINARY, model, {"--threads", "1", "--api-key", kKey},
                                     (dir_ / "serve.log").string());
    ASSERT_TRUE(serve.ok()) << serve.status().ToString();
    serve_ = serve->release();
    auto route = ServeProcess::StartRoute(PROSGROW_BINARY, {serve_->base_url()}, {"--api-key", kKey},
                                          (dir_ / "route.log").string());
    ASSERT_TRUE(route.ok()) << route.status().ToString();
    route_ = route->release();
  }
  static void TearDownTestSuite() {
    delete route_;
    delete serve_;
    route_ = serve_ = nullptr;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!serve_ || !route_) FAIL() << "serve or route did not start (a failure, not a skip)";
  }

  // Runs `check` against serve's port and route's port.
  static void OnBothDoors(const std::function<void(const std::string& door, int port)>& check) {
    check("serve", serve_->port());
    check("route", route_->port());
    EXPECT_TRUE(serve_->Alive());
    EXPECT_TRUE(route_->Alive());
  }

  // One refused request: exactly one answer with `status` and `code`, and
  // the connection closed; what was sent after it is never answered.
  static void ExpectRefused(const std::string& request, int status, const std::string& code,
                            const std::string& message_part) {
    OnBothDoors([&](const std::string& door, int port) {
      Answer a = Talk(port, request + kSmuggled);
      ASSERT_EQ(a.statuses.size(), 1u) << door << ": " << request;
      EXPECT_EQ(a.statuses[0], status) << door << ": " << a.bodies[0];
      EXPECT_EQ(ErrorCode(a.bodies[0]), code) << door << ": " << a.bodies[0];
      EXPECT_NE(a.bodies[0].find(message_part), std::string::npos) << door << ": " << a.bodies[0];
      EXPECT_TRUE(a.closed) << door;
    });
  }

  static inline fs::path dir_;
  static inline ServeProcess* serve_ = nullptr;
  static inline ServeProcess* route_ = nullptr;
};

TEST_F(HttpFraming, GoodLengthAndChunkedRequestsKeepTheConnection) {
  const std::string by_length = kHead + "Content-Length: " + std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  const std::string chunked = kHead + "Transfer-Encoding: chunked\r\n\r\n" + Hex(10) + "\r\n" + kBody.substr(0, 10) +
                              "\r\n" + Hex(kBody.size() - 10) + ";ext=1\r\n" + kBody.substr(10) + "\r\n0\r\n\r\n";
  const std::string last = "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  OnBothDoors([&](const std::string& door, int port) {
    Answer a = Talk(port, by_length + chunked + last);
    ASSERT_EQ(a.statuses.size(), 3u) << door;
    EXPECT_EQ(a.statuses, (std::vector<int>{200, 200, 200})) << door << ": " << a.bodies[0] << a.bodies[1];
    EXPECT_TRUE(a.closed) << door;
  });
}

TEST_F(HttpFraming, TwoContentLengthsAre400) {
  // Different values (the first used to win) and equal ones.
  ExpectRefused(kHead + "Content-Length: " + std::to_string(kBody.size()) + "\r\nContent-Length: 4\r\n\r\n" + kBody,
                400, "bad_framing", "more than one Content-Length");
  ExpectRefused(kHead + "Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}", 400, "bad_framing",
                "more than one Content-Length");
  ExpectRefused(kHead + "Content-Length: 2, 2\r\n\r\n{}", 400, "bad_framing", "is not a decimal number");
}

TEST_F(HttpFraming, ContentLengthWithTransferEncodingIs400) {
  // Chunked says the body is empty; the length says the smuggled GET is the body.
  ExpectRefused(kHead + "Content-Length: " + std::to_string(5 + kSmuggled.size()) +
                    "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                400, "bad_framing", "both Content-Length and Transfer-Encoding");
}

TEST_F(HttpFraming, MalformedChunkSizesAre400AtOnce) {
  for (const std::string size : {"-5", "zz", "FFFFFFFFFFFFFFFFFFFF", "0x1f", " 1f"}) {
    ExpectRefused(kHead + "Transfer-Encoding: chunked\r\n\r\n" + size + "\r\n" + kBody + "\r\n0\r\n\r\n", 400,
                  "bad_framing", "chunk size");
  }
  // Chunk data longer than its size (cpp-httplib ended the body there).
  ExpectRefused(kHead + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX\r\n0\r\n\r\n", 400, "bad_framing",
                "longer than its chunk size");
}

TEST_F(HttpFraming, OtherTransferCodingsAre501) {
  ExpectRefused(kHead + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501,
                "unsupported_transfer_coding", "'gzip' is not implemented");
  ExpectRefused(kHead + "Transfer-Encoding: chunked, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, "bad_framing",
                "exactly 'chunked'");
}

TEST_F(HttpFraming, MalformedHeaderLinesAre400) {
  // Each of these lines cpp-httplib skipped or decoded, so it saw another body length than a proxy would.
  ExpectRefused(kHead + "Content-Length : 2\r\n\r\n{}", 400, "bad_framing", "is not a token");
  ExpectRefused(kHead + "Content-Length: 2\n\r\n{}", 400, "bad_framing", "does not end in CRLF");
  ExpectRefused(kHead + "X-A: 1\r\n Transfer-Encoding: chunked\r\n\r\n", 400, "bad_framing", "line folding");
  ExpectRefused(kHead + "Content-Length: %32\r\n\r\n{}", 400, "bad_framing", "is not a decimal number");
}

TEST_F(HttpFraming, ABodyOnAMethodThatTakesNoneIs400) {
  // cpp-httplib reads no body for GET: the 40 bytes a proxy forwards as its
  // body would be read as a second request.
  const std::string inner = "GET /v1/models HTTP/1.1\r\nHost: t\r\n\r\n";
  ExpectRefused(
      "GET /health HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(inner.size()) + "\r\n\r\n" + inner, 400,
      "bad_framing", "a GET request may not carry a body");
  ExpectRefused("GET /health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_framing",
                "may not carry a body");
}

TEST_F(HttpFraming, ARequestWithoutALengthHasNoBody) {
  // RFC 9112 6.3: neither Content-Length nor chunked means an empty body, so
  // the bytes after the headers are the next request (cpp-httplib read them
  // as the body until the connection closed).
  const std::string request = kHead + "\r\n" + "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  OnBothDoors([&](const std::string& door, int port) {
    Answer a = Talk(port, request);
    ASSERT_EQ(a.statuses.size(), 2u) << door;
    EXPECT_EQ(a.statuses[0], 400) << door << ": " << a.bodies[0];
    EXPECT_NE(ErrorCode(a.bodies[0]), "request_timeout") << door << ": " << a.bodies[0];
    EXPECT_EQ(a.statuses[1], 200) << door;
  });
}

TEST_F(HttpFraming, AnOversizedBodyIsReadAndTheClientGetsThe413) {
  // 20 MiB against the default 8 MiB limit, written whole before reading as
  // most clients do: the server answers at the headers, then reads and drops
  // the body, so the writes succeed and the answer is there to read.
  const std::string body(20 << 20, 'a');
  const std::string request = kHead + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  OnBothDoors([&](const std::string& door, int port) {
    for (int run = 0; run < 3; ++run) {
      Answer a = Talk(port, request, /*send_first=*/true);
      EXPECT_TRUE(a.sent_all) << door << " run " << run << ": the write failed (broken pipe or reset)";
      ASSERT_EQ(a.statuses.size(), 1u) << door << " run " << run;
      EXPECT_EQ(a.statuses[0], 413) << door;
      EXPECT_NE(a.bodies[0].find("--max-body-bytes"), std::string::npos) << door << ": " << a.bodies[0];
      EXPECT_TRUE(a.closed) << door;
    }
  });
}

TEST_F(HttpFraming, BearerSchemeInAnyCase) {
  OnBothDoors([&](const std::string& door, int port) {
    for (const std::string scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) {
      Answer a = Talk(port, "GET /v1/models HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: " + scheme +
                                " " + kKey + "\r\n\r\n");
      ASSERT_EQ(a.statuses.size(), 1u) << door << " " << scheme;
      EXPECT_EQ(a.statuses[0], 200) << door << " " << scheme << ": " << a.bodies[0];
    }
    Answer wrong = Talk(port,
                        "GET /v1/models HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: bearer "
                        "sk-wrong-key-000\r\n\r\n");
    ASSERT_EQ(wrong.statuses.size(), 1u) << door;
    EXPECT_EQ(wrong.statuses[0], 401) << door;
  });
}

}  // namespace
}  // namespace pg
