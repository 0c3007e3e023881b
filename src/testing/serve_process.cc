#include "testing/serve_process.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/clock.h"

namespace pg::testing {
namespace {

// fork + execv with stdout and stderr appended to log_path. Returns the pid (-1 on failure).
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ::execv(args[0], args.data());
  ::_exit(127);
}

int ExitCode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& s, size_t n = 2000) { return s.size() > n ? s.substr(s.size() - n) : s; }

}  // namespace

Status MakeTinyModel(const std::string& prosgrow_bin, const std::string& out_path, int seed) {
  std::string log = out_path + ".log";
  pid_t pid = Spawn({prosgrow_bin, "make-model", "--shape", "tiny", "--vocab", "builtin", "--type", "q8_0", "--seed",
                     std::to_string(seed), "--out", out_path},
                    log);
  if (pid < 0) return IoError("fork failed");
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (ExitCode(status) != 0) return Internal("make-model failed: " + Tail(ReadFile(log)));
  return Status::Ok();
}

Result<std::unique_ptr<ServeProcess>> ServeProcess::Start(const std::string& prosgrow_bin, const std::string& model,
                                                          const std::vector<std::string>& args,
                                                          const std::string& log_path, double timeout_s) {
  std::vector<std::string> argv = {prosgrow_bin, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Launch(argv, log_path, timeout_s);
}

Result<std::unique_ptr<ServeProcess>> ServeProcess::StartRoute(const std::string& prosgrow_bin,
                                                               const std::vector<std::string>& replica_urls,
                                                               const std::vector<std::string>& args,
                                                               const std::string& log_path, double timeout_s) {
  std::vector<std::string> argv = {prosgrow_bin, "route", "--host", "127.0.0.1", "--port", "0"};
  for (const std::string& url : replica_urls) argv.insert(argv.end(), {"--replica", url});
  argv.insert(argv.end(), args.begin(), args.end());
  return Launch(argv, log_path, timeout_s);
}

Result<std::unique_ptr<ServeProcess>> ServeProcess::Launch(const std::vector<std::string>& argv,
                                                           const std::string& log_path, double timeout_s) {
  std::unique_ptr<ServeProcess> p(new ServeProcess());
  p->log_path_ = log_path;
  p->pid_ = Spawn(argv, log_path);
  if (p->pid_ < 0) return IoError("fork failed");
  static const std::string kListening = "listening on http://127.0.0.1:";
  bool healthy = WaitUntil(
      [&] {
        if (!p->Alive()) return true;  // stop waiting; reported below
        if (p->port_ < 0) {
          std::string log = p->Log();
          size_t at = log.find(kListening);
          if (at == std::string::npos) return false;
          p->port_ = std::atoi(log.c_str() + at + kListening.size());
        }
        auto res = p->Client(5)->Get("/health");
        return res && res->status == 200;
      },
      timeout_s);
  if (!p->Alive()) {
    return Internal(argv[1] + " exited with code " + std::to_string(p->exit_code_) + ": " + Tail(p->Log()));
  }
  if (!healthy) return Internal(argv[1] + " did not become healthy: " + Tail(p->Log()));
  return p;
}

ServeProcess::~ServeProcess() { Stop(); }

std::string ServeProcess::base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::unique_ptr<httplib::Client> ServeProcess::Client(double timeout_s) const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
  c->set_connection_timeout(static_cast<time_t>(timeout_s), 0);
  c->set_read_timeout(static_cast<time_t>(timeout_s), 0);
  c->set_write_timeout(static_cast<time_t>(timeout_s), 0);
  return c;
}

bool ServeProcess::Alive() {
  if (pid_ < 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) exit_code_ = ExitCode(status);
  pid_ = -1;
  return false;
}

void ServeProcess::Kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_code_ = ExitCode(status);
  pid_ = -1;
}

int ServeProcess::Stop() {
  if (pid_ < 0) return exit_code_;
  ::kill(pid_, SIGTERM);
  // A server that does not stop on SIGTERM is a failure the exit code shows.
  if (!WaitUntil([this] { return !Alive(); }, 60)) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = 128 + SIGKILL;
    pid_ = -1;
  }
  return exit_code_;
}

std::string ServeProcess::Log() const { return ReadFile(log_path_); }

std::string ServeProcess::Metrics() const {
  auto res = Client(30)->Get("/metrics");
  return res && res->status == 200 ? res->body : std::string();
}

std::optional<double> Sample(const std::string& text, const std::string& series) {
  std::string needle = "\n" + series + " ";
  size_t at = text.rfind(series + " ", 0) == 0 ? 0 : text.find(needle);
  if (at == std::string::npos) return std::nullopt;
  if (at != 0) at += 1;
  return std::strtod(text.c_str() + at + series.size() + 1, nullptr);
}

bool WaitUntil(const std::function<bool()>& pred, double timeout_s) {
  double end = NowSeconds() + timeout_s;
  while (NowSeconds() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace pg::testing
