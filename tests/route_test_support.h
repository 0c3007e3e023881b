// Test support for the router's edge tests (route_limits_test.cc,
// route_deadlines_test.cc, route_forward_test.cc): real replicas and a real
// router (RouteFleet), a fake replica, used ONLY to inject faults a
// real `prosgrow serve` never shows (an answer that never comes, a 400 MB
// body, status 999, a body that is not JSON), and the router's memory read
// from /proc. Its /health answers 200, as a hung replica's may.
// Thread-safety: FakeReplica serves on its own threads; Release() from any.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "testing/serve_process.h"

namespace pg::testing {

// Real `prosgrow serve` replicas (`count`, with `serve_flags`) on the tiny
// model, and `prosgrow route` in front of them and of `extra_urls` (fakes),
// with `route_flags`. Every real replica is up in the router's eyes on return.
struct RouteFleet {
  std::string dir, model;
  std::vector<std::unique_ptr<ServeProcess>> replicas;
  std::unique_ptr<ServeProcess> router;

  explicit RouteFleet(const std::string& name) {
    dir = ::testing::TempDir() + "pg_" + name + "_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    model = dir + "/tiny.gguf";
  }
  ~RouteFleet() {
    if (router) router->Stop();
    for (auto& r : replicas) r->Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // Returns "" or what failed.
  std::string Start(int count, const std::vector<std::string>& serve_flags, const std::vector<std::string>& extra_urls,
                    const std::vector<std::string>& route_flags) {
    if (Status st = MakeTinyModel(PROSGROW_BINARY, model); !st.ok()) return st.ToString();
    std::vector<std::string> urls;
    std::vector<std::string> f = {"--threads", "1"};
    f.insert(f.end(), serve_flags.begin(), serve_flags.end());
    for (int i = 0; i < count; ++i) {
      auto r = ServeProcess::Start(PROSGROW_BINARY, model, f, dir + "/replica" + std::to_string(i) + ".log");
      if (!r.ok()) return r.status().ToString();
      replicas.push_back(std::move(*r));
    }
    for (const std::string& u : extra_urls) urls.push_back(u);
    for (auto& r : replicas) urls.push_back(r->base_url());
    // PROSGROW_TEST_ROUTE_BINARY: another build's router (e.g. main's, to see these tests fail there).
    const char* other = std::getenv("PROSGROW_TEST_ROUTE_BINARY");
    auto r = ServeProcess::StartRoute(other ? other : PROSGROW_BINARY, urls, route_flags, dir + "/route.log");
    if (!r.ok()) return r.status().ToString();
    router = std::move(*r);
    const bool up = WaitUntil([&] {
      const std::string m = router->Metrics();
      for (const std::string& u : urls)
        if (Sample(m, "prosgrow_route_replica_up{replica=\"" + u + "\"}") != 1) return false;
      return true;
    });
    return up ? "" : "replicas never up in the router: " + router->Metrics();
  }
  double Metric(const std::string& series) const { return Sample(router->Metrics(), series).value_or(-1); }
};

class FakeReplica {
 public:
  // `api` answers every generation path, /v1/models and /tokenize.
  explicit FakeReplica(httplib::Server::Handler api) {
    srv_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    srv_.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"ok"})", "application/json");
    });
    for (const char* p : {"/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/responses", "/tokenize"})
      srv_.Post(p, api);
    srv_.Get("/v1/models", api);
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
  }
  ~FakeReplica() {
    Release();
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::atomic<int> calls{0};

  // Blocks a handler until Release() (or 10 minutes): an answer that never comes.
  void Hang() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::minutes(10), [&] { return released_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  httplib::Server srv_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

// A line of /proc/PID/status in bytes ("VmRSS", "VmHWM"); -1 when absent.
inline int64_t ProcStatusBytes(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;  // kB
  return -1;
}

}  // namespace pg::testing
