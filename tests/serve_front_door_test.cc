// Issue 11, "no request can crash the server", against the real binary:
// `prosgrow serve` on a tiny synthetic model (make-model, no ../shared
// needed) with a small device KV tier, driven over raw sockets. Every limit
// answers its 4xx naming the flag, and the server keeps answering good
// requests afterwards. Also `prosgrow --version` and prosgrow_build_info.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "test_util.h"
#include "testing/http_test_util.h"

extern char** environ;

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct HttpReply {
  int status = 0;    // 0: no answer (connection dropped)
  std::string head;  // status line + headers
  std::string body;
};

// Sends `request` (written whole, from another thread: the server may stop
// reading at a limit) and reads the answer until the server closes.
HttpReply Exchange(int port, const std::string& request) {
  HttpReply r;
  int fd = testing::ConnectLoopback(port);
  if (fd < 0) return r;
  std::thread sender([fd, &request] {
    size_t off = 0;
    while (off < request.size()) {
      ssize_t n = ::send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  });
  std::string got;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) break;  // a bound on a hang, not a timing check
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  size_t end = got.find("\r\n\r\n");
  if (got.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(got.substr(9, 3));
  r.head = got.substr(0, end);
  r.body = got.substr(end + 4);
  return r;
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string Get(const std::string& path, const std::string& extra_headers = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + extra_headers + "\r\n";
}

// The error message of an OpenAI-style error body ("" if it is not one).
std::string ErrorMessage(const HttpReply& r) {
  json j = json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].contains("message")) return "";
  return j["error"]["message"].get<std::string>();
}

// A completion request on token ids: prompt_tokens copies of token 1.
std::string TokenPrompt(int prompt_tokens, int max_tokens) {
  json body = {{"prompt", std::vector<int>(static_cast<size_t>(prompt_tokens), 1)},
               {"max_tokens", max_tokens},
               {"ignore_eos", true}};
  return Post("/v1/completions", body.dump());
}

class ServeFrontDoor : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("pg_front_door_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string model = (dir_ / "tiny.gguf").string();
    auto made =
        test::RunProsgrow("make-model --shape tiny --vocab builtin --type q8_0 --arch qwen2 --seed 3 --out " + model);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    // 64KiB of device KV: a few hundred tokens for one sequence on the tiny shape.
    std::vector<std::string> args = {PROSGROW_BINARY,
                                     "serve",
                                     "-m",
                                     model,
                                     "--port",
                                     "0",
                                     "--threads",
                                     "1",
                                     "--kv-device-mem",
                                     "64KiB",
                                     "--max-body-bytes",
                                     "1MiB",
                                     "--http-threads",
                                     "8"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    log_ = (dir_ / "serve.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    // The bound port is in the log line "listening on http://127.0.0.1:PORT".
    const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 600 && port_ <= 0; ++i) {
      std::smatch m;
      std::string text = ReadLog();
      if (std::regex_search(text, m, listening))
        port_ = std::stoi(m[1]);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "serve exited early:\n" << text;
      }
    }
    ASSERT_GT(port_, 0) << ReadLog();
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    fs::remove_all(dir_);
  }

  void SetUp() override {
    if (port_ <= 0) FAIL() << "the server did not start (a failure, not a skip): " << ReadLog();
  }

  static std::string ReadLog() {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // A good request still gets its completion.
  static void ExpectServing() {
    HttpReply r = Exchange(port_, TokenPrompt(8, 4));
    ASSERT_EQ(r.status, 200) << r.head << "\n" << r.body;
    json j = json::parse(r.body, nullptr, false);
    EXPECT_EQ(j["usage"]["completion_tokens"], 4) << r.body;
  }

  static inline fs::path dir_;
  static inline std::string log_;
  static inline pid_t pid_ = -1;
  static inline int port_ = -1;
};

TEST_F(ServeFrontDoor, DeeplyNestedBodyIsRefusedAndTheServerLives) {
  const int kDepth = 100000;
  std::string body = R"({"messages": )" + std::string(kDepth, '[') + std::string(kDepth, ']') + "}";
  HttpReply r = Exchange(port_, Post("/v1/chat/completions", body));
  EXPECT_EQ(r.status, 400) << r.head << "\n" << r.body;
  EXPECT_NE(ErrorMessage(r).find("--max-json-depth"), std::string::npos) << r.body;
  ExpectServing();
}

// `curl -d` without a Content-Type sends application/x-www-form-urlencoded,
// which cpp-httplib caps at 8,192 bytes itself: the 413 must say so, not
// blame --max-body-bytes (the body is far below it).
TEST_F(ServeFrontDoor, LargeFormEncodedBodyGetsA413ThatNamesTheContentType) {
  std::string body = R"({"prompt": ")" + std::string(20000, 'a') + R"(", "max_tokens": 1})";
  std::string req = Post("/v1/completions", body);
  req.replace(req.find("application/json"), 16, "application/x-www-form-urlencoded");
  HttpReply r = Exchange(port_, req);
  EXPECT_EQ(r.status, 413) << r.head << "\n" << r.body;
  EXPECT_NE(ErrorMessage(r).find("Content-Type: application/json"), std::string::npos) << r.body;
  EXPECT_EQ(ErrorMessage(r).find("--max-body-bytes"), std::string::npos) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, TooManyHeadersGet431NamingTheFlag) {
  std::string headers;
  for (int i = 0; i < 150; ++i) headers += "X-Many-" + std::to_string(i) + ": v\r\n";
  HttpReply r = Exchange(port_, Get("/health", headers));
  EXPECT_EQ(r.status, 431) << r.head;
  EXPECT_NE(ErrorMessage(r).find("--max-headers"), std::string::npos) << r.body;
  // 100 headers in all (Host and Connection included) is still fine.
  headers.clear();
  for (int i = 0; i < 98; ++i) headers += "X-Many-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(Exchange(port_, Get("/health", headers)).status, 200);
  ExpectServing();
}

TEST_F(ServeFrontDoor, OversizedHeadersGet431NamingTheFlag) {
  std::string headers;
  for (int i = 0; i < 90; ++i) headers += "X-Big-" + std::to_string(i) + ": " + std::string(1000, 'b') + "\r\n";
  HttpReply r = Exchange(port_, Get("/health", headers));
  EXPECT_EQ(r.status, 431) << r.head;
  EXPECT_NE(ErrorMessage(r).find("--max-header-bytes"), std::string::npos) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, LongUrlGets414NamingTheFlag) {
  HttpReply r = Exchange(port_, Get("/v1/models/" + std::string(10000, 'u')));
  EXPECT_EQ(r.status, 414) << r.head;
  EXPECT_NE(ErrorMessage(r).find("--max-url-bytes"), std::string::npos) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, MalformedRequestGets400AndTheConnectionEnds) {
  // What follows an unparsable request is not read as another request.
  HttpReply r = Exchange(port_, "GARBAGE\r\n\r\n" + Get("/health"));
  EXPECT_EQ(r.status, 400) << r.head;
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_EQ(r.body.find("HTTP/1.1"), std::string::npos) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, StalledRequestGets400RequestTimeout) {
  // Half the headers, or the headers and half the body, then nothing for
  // longer than the 5 s allowed between reads (the connection stays open).
  const std::string whole = Post("/v1/completions", R"({"prompt": "x"})");
  for (const std::string& part :
       {std::string("POST /v1/completions HTTP/1.1\r\nHost: x\r\n"), whole.substr(0, whole.size() - 4)}) {
    HttpReply r = Exchange(port_, part);
    EXPECT_EQ(r.status, 400) << r.head;
    EXPECT_EQ(json::parse(r.body, nullptr, false)["error"]["code"], "request_timeout") << r.body;
  }
  ExpectServing();
}

TEST_F(ServeFrontDoor, OversizedBodyGets413NamingTheFlag) {
  json body = {{"prompt", std::string(2 << 20, 'a')}, {"max_tokens", 1}};
  HttpReply r = Exchange(port_, Post("/v1/completions", body.dump()));
  EXPECT_EQ(r.status, 413) << r.head;
  EXPECT_NE(ErrorMessage(r).find("--max-body-bytes"), std::string::npos) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, ChunkedAndLengthlessBodiesAreBoundedToo) {
  // 1.5 MiB of JSON in 64 KiB chunks: over the 1 MiB limit once decoded.
  std::string text(3 << 19, 'a');
  json big = {{"prompt", text}, {"max_tokens", 1}};
  const std::string payload = big.dump();
  std::string chunked;
  for (size_t off = 0; off < payload.size(); off += 65536) {
    const std::string part = payload.substr(off, 65536);
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", part.size());
    chunked += size + part + "\r\n";
  }
  chunked += "0\r\n\r\n";
  const std::string head =
      "POST /v1/completions HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
      "Content-Type: application/json\r\n";
  HttpReply r = Exchange(port_, head + "Transfer-Encoding: chunked\r\n\r\n" + chunked);
  EXPECT_EQ(r.status, 413) << r.head << "\n" << r.body.substr(0, 300);
  EXPECT_NE(ErrorMessage(r).find("--max-body-bytes"), std::string::npos) << r.body.substr(0, 300);
  // Far past the limit (8 MiB), chunked: the server stops reading.
  std::string huge;
  for (int i = 0; i < 128; ++i) huge += "10000\r\n" + std::string(65536, 'a') + "\r\n";
  r = Exchange(port_, head + "Transfer-Encoding: chunked\r\n\r\n" + huge + "0\r\n\r\n");
  EXPECT_EQ(r.status, 413) << r.head;
  // A declared length past the limit.
  r = Exchange(port_, head + "Content-Length: 99999999999\r\n\r\n" + std::string(4 << 20, 'a'));
  EXPECT_EQ(r.status, 413) << r.head;
  ExpectServing();
}

TEST_F(ServeFrontDoor, BodyCountLimitsNameTheirFlags) {
  json messages = json::array();
  for (int i = 0; i < 5000; ++i) messages.push_back({{"role", "user"}, {"content", "hi"}});
  json tools = json::array();
  for (int i = 0; i < 200; ++i)
    tools.push_back(
        {{"type", "function"}, {"function", {{"name", "f" + std::to_string(i)}, {"parameters", json::object()}}}});
  json logit_bias = json::object();
  for (int i = 0; i < 2000; ++i) logit_bias[std::to_string(i)] = 1;
  const json one = json::array({{{"role", "user"}, {"content", "hi"}}});
  struct Case {
    json body;
    const char* flag;
  } cases[] = {
      {{{"messages", messages}}, "--max-messages"},
      {{{"messages", one}, {"tools", tools}}, "--max-tools"},
      {{{"messages", one}, {"stop", std::vector<std::string>(20, "x")}}, "--max-stop"},
      {{{"messages", one}, {"logit_bias", logit_bias}}, "--max-logit-bias"},
  };
  for (const Case& c : cases) {
    HttpReply r = Exchange(port_, Post("/v1/chat/completions", c.body.dump()));
    EXPECT_EQ(r.status, 400) << c.flag << ": " << r.body;
    EXPECT_NE(ErrorMessage(r).find(c.flag), std::string::npos) << r.body;
  }
  ExpectServing();
}

TEST_F(ServeFrontDoor, RequestThatCanNeverFitGets400NamingBothNumbers) {
  HttpReply r = Exchange(port_, TokenPrompt(300, 10));
  ASSERT_EQ(r.status, 400) << r.head << "\n" << r.body;
  const std::string msg = ErrorMessage(r);
  EXPECT_NE(msg.find("--kv-device-mem"), std::string::npos) << msg;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(holds at most (\d+) tokens for one sequence)"))) << msg;
  const int capacity = std::stoi(m[1]);
  ASSERT_GT(capacity, 16);
  ASSERT_LT(capacity, 300) << "--kv-device-mem 64KiB should hold fewer than 300 tokens of the tiny model";
  EXPECT_NE(msg.find("at least 301 tokens of KV (300 prompt"), std::string::npos) << msg;

  // Past the bound only through max_tokens: both numbers in the message.
  r = Exchange(port_, TokenPrompt(capacity - 8, 9));
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_NE(ErrorMessage(r).find(std::to_string(capacity + 1) + " tokens of KV (" + std::to_string(capacity - 8) +
                                 " prompt + 9 max_tokens)"),
            std::string::npos)
      << r.body;
  // Exactly at the bound, and without max_tokens (it defaults to the room
  // left): admitted, and the engine serves them to the end.
  r = Exchange(port_, TokenPrompt(capacity - 8, 8));
  EXPECT_EQ(r.status, 200) << r.body;
  json no_max = {{"prompt", std::vector<int>(static_cast<size_t>(capacity - 4), 1)}, {"ignore_eos", true}};
  r = Exchange(port_, Post("/v1/completions", no_max.dump()));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 4) << r.body;
  ExpectServing();
}

TEST_F(ServeFrontDoor, MetricsAndVersionReportTheBuild) {
  auto v = test::RunProsgrow("--version");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(v.out, m,
                                std::regex(R"(^prosgrow (\S+) \(commit (\S+), (\S+), isa (scalar|avx2|avx512)\)\n$)")))
      << v.out;
  const std::string version = m[1], commit = m[2], build_type = m[3], isa = m[4];
  HttpReply r = Exchange(port_, Get("/metrics"));
  ASSERT_EQ(r.status, 200);
  const std::string series = "prosgrow_build_info{version=\"" + version + "\",commit=\"" + commit + "\",build_type=\"" +
                             build_type + "\",isa=\"" + isa + "\"} 1\n";
  EXPECT_NE(r.body.find(series), std::string::npos) << series << "\n" << r.body.substr(0, 2000);
  EXPECT_NE(ReadLog().find("prosgrow " + version + " (commit " + commit), std::string::npos) << ReadLog();
}

// The engine's own admission check, seen through `prosgrow generate`.
TEST_F(ServeFrontDoor, GenerateRefusesWhatTheKvTierCannotHold) {
  const std::string model = (dir_ / "tiny.gguf").string();
  auto r = test::RunProsgrow("generate -m " + model + " --kv-device-mem 64KiB -n 400 -p 'a b c d e f g h'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  // The last line (the engine logs its shape before it) is the error.
  const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("prosgrow generate: the request needs ", 0), 0u) << r.err;
  EXPECT_NE(last.find(" + 400 max_tokens) but the device tier holds at most "), std::string::npos) << r.err;
  EXPECT_NE(last.find("--kv-device-mem"), std::string::npos) << r.err;
  r = test::RunProsgrow("generate -m " + model + " --kv-device-mem 64KiB -n 4 -p 'a b c d e f g h'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ServeFlags, BadLimitValuesFailWithOneLine) {
  for (const char* bad :
       {"--max-headers 0", "--max-url-bytes 9000", "--max-json-depth 2", "--max-messages 0", "--max-header-bytes 1",
        "--max-body-bytes 12", "--max-stop -1", "--max-tools -3", "--max-logit-bias -1"}) {
    auto r = test::RunProsgrow(std::string("serve -m /nonexistent.gguf ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    const std::string flag = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(r.err.find(flag), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace pg
