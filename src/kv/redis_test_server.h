// RedisTestServer: a real redis-server child process for tests (the remote
// KV tier's unit and end-to-end tests), on a free loopback port, with no
// persistence (--save '' --appendonly no). Header-only and included only by
// tests, so nothing of it ships. Start() fails (the caller GTEST_SKIPs) when
// redis-server is not on PATH.
//
// Thread-safety: one thread drives it.
#pragma once

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace pg::testing {

class RedisTestServer {
 public:
  // True when redis-server is on PATH.
  static bool Available() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

  // Starts redis-server on a free port; extra: more arguments (e.g.
  // "--cluster-enabled", "yes"). "" on success, else why not.
  std::string Start(const std::vector<std::string>& extra = {}) {
    if (!Available()) return "redis-server is not on PATH";
    // Below 55536: a cluster node also listens on port + 10000 (its bus).
    for (int i = 0; i < 100 && (port_ <= 0 || port_ > 55535); ++i) port_ = FreePort();
    if (port_ <= 0 || port_ > 55535) return "no free port";
    dir_ = "/tmp/pg-redis-test-" + std::to_string(::getpid()) + "-" + std::to_string(port_);
    std::system(("mkdir -p " + dir_).c_str());
    std::vector<std::string> args = {
        "redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir",        dir_,     "--daemonize",         "no"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      const int fd = ::open((dir_ + "/redis.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 500; ++i) {  // up to 10 s
      if (Command("PING") == "PONG") return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "redis-server did not answer PING";
  }

  ~RedisTestServer() { Stop(); }

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }

  // SIGKILL (the server vanishes mid-run).
  void Kill() { End(SIGKILL); }
  void Stop() {
    if (End(SIGTERM)) std::system(("rm -rf " + dir_).c_str());
  }
  // SIGSTOP / SIGCONT: a server that accepts connections and never answers.
  void Pause() { ::kill(pid_, SIGSTOP); }
  void Resume() { ::kill(pid_, SIGCONT); }

  // The credentials Command() and Keys() log in with (after `--requirepass`
  // or an ACL user); "" user = the default user.
  void SetCredentials(std::string user, std::string password) {
    user_ = std::move(user);
    password_ = std::move(password);
  }

  // Runs one command (argv, binary safe) on a fresh connection; the reply as
  // text ("(nil)", "(error) ...", integers in decimal, "(array N)"), or
  // "(unreachable)".
  std::string Command(const std::vector<std::string>& argv) const {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err) {
      if (c) redisFree(c);
      return "(unreachable)";
    }
    redisSetTimeout(c, tv);
    Auth(c);
    std::vector<const char*> a;
    std::vector<size_t> l;
    for (const std::string& s : argv) {
      a.push_back(s.data());
      l.push_back(s.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, int(a.size()), a.data(), l.data()));
    std::string out = "(unreachable)";
    if (r) {
      if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
        out.assign(r->str, r->len);
      else if (r->type == REDIS_REPLY_ERROR)
        out = "(error) " + std::string(r->str, r->len);
      else if (r->type == REDIS_REPLY_INTEGER)
        out = std::to_string(r->integer);
      else if (r->type == REDIS_REPLY_ARRAY)
        out = "(array " + std::to_string(r->elements) + ")";
      else
        out = "(nil)";
      freeReplyObject(r);
    }
    redisFree(c);
    return out;
  }
  std::string Command(const char* one_word) const { return Command(std::vector<std::string>{one_word}); }

  // Every key matching pattern (KEYS; fine for a test's few keys).
  std::vector<std::string> Keys(const std::string& pattern) const {
    std::vector<std::string> out;
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err) {
      if (c) redisFree(c);
      return out;
    }
    Auth(c);
    auto* r = static_cast<redisReply*>(redisCommand(c, "KEYS %s", pattern.c_str()));
    if (r && r->type == REDIS_REPLY_ARRAY)
      for (size_t i = 0; i < r->elements; ++i) out.emplace_back(r->element[i]->str, r->element[i]->len);
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
  }

 private:
  // Sends `sig` to the running server (resumed first, in case it is paused)
  // and reaps it; false when none runs.
  bool End(int sig) {
    if (pid_ <= 0) return false;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, sig);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return true;
  }

  void Auth(redisContext* c) const {
    if (password_.empty()) return;
    auto* r = static_cast<redisReply*>(user_.empty() ? redisCommand(c, "AUTH %s", password_.c_str())
                                                     : redisCommand(c, "AUTH %s %s", user_.c_str(), password_.c_str()));
    if (r) freeReplyObject(r);
  }

  static int FreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    ::close(fd);
    return port;
  }

  pid_t pid_ = -1;
  int port_ = -1;
  std::string dir_;
  std::string user_, password_;
};

}  // namespace pg::testing
