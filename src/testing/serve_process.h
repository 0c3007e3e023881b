// ServeProcess: a real `prosgrow serve` child process for end-to-end tests,
// on a loopback port the server picks itself (--port 0, read back from its
// log), so parallel tests never race for a port. Plus the helpers such tests
// share: making the tiny synthetic model, reading /metrics samples, and
// waiting on a condition with a generous timeout (never a timing claim).
//
// Thread-safety: a ServeProcess is driven from one thread; port() and
// Client() may be used from any thread once Start() returned.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace httplib {
class Client;
}

namespace pg::testing {

// `prosgrow make-model --shape tiny --vocab builtin --type q8_0` into
// out_path (seeded; needs no ../shared).
Status MakeTinyModel(const std::string& prosgrow_bin, const std::string& out_path, int seed = 3);

class ServeProcess {
 public:
  // Starts `prosgrow serve -m model --host 127.0.0.1 --port 0 <args>` with
  // stdout and stderr in log_path, and waits (up to timeout_s) until the log
  // names the bound port and GET /health answers 200.
  static Result<std::unique_ptr<ServeProcess>> Start(const std::string& prosgrow_bin, const std::string& model,
                                                     const std::vector<std::string>& args, const std::string& log_path,
                                                     double timeout_s = 180);
  // Starts `prosgrow route --host 127.0.0.1 --port 0 --replica URL... <args>`
  // the same way, and waits until its /health answers 200 (a replica is up).
  static Result<std::unique_ptr<ServeProcess>> StartRoute(const std::string& prosgrow_bin,
                                                          const std::vector<std::string>& replica_urls,
                                                          const std::vector<std::string>& args,
                                                          const std::string& log_path, double timeout_s = 180);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }  // e.g. to send SIGHUP
  std::string base_url() const;
  std::unique_ptr<httplib::Client> Client(double timeout_s = 120) const;
  // The process is still running (it did not crash or exit).
  bool Alive();
  // SIGTERM, then waits; returns the exit code (128+signal if killed).
  int Stop();
  // SIGKILL now (a replica dying mid-request, for failover tests), and reaps it.
  void Kill();
  std::string Log() const;
  // GET /metrics ("" when it fails).
  std::string Metrics() const;

 private:
  ServeProcess() = default;
  // Spawns argv (which binds 127.0.0.1 port 0 and logs "listening on
  // http://127.0.0.1:PORT") and waits for its /health.
  static Result<std::unique_ptr<ServeProcess>> Launch(const std::vector<std::string>& argv, const std::string& log_path,
                                                      double timeout_s);
  pid_t pid_ = -1;
  int port_ = -1;
  int exit_code_ = -1;
  std::string log_path_;
};

// The value of one Prometheus sample, e.g. Sample(text,
// "prosgrow_kv_pinned_blocks{tier=\"device\"}"); nullopt when absent.
std::optional<double> Sample(const std::string& metrics_text, const std::string& series);

// Polls pred every 10 ms until it holds or timeout_s passes; returns pred().
bool WaitUntil(const std::function<bool()>& pred, double timeout_s = 60);

}  // namespace pg::testing
