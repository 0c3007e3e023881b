// The fixture of the real-server suite (tests/serve_real_*_test.cc):
// `prosgrow serve` as a subprocess on a tiny synthetic model made once per
// run (`make-model --shape tiny --vocab builtin`, so no ../shared), one
// shared server for the tests that need no special flags, and helpers.
// Conditions are awaited with generous timeouts; nothing asserts a time.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "testing/http_test_util.h"
#include "testing/serve_process.h"

namespace pg::serve_real {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Sample;
using testing::ServeProcess;
using testing::SseData;
using testing::WaitUntil;

inline const char* kChatHi = R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":8})";
inline const char* kDevicePinned = "prosgrow_kv_pinned_blocks{tier=\"device\"}";

// One sample of the server's /metrics now (-1 when absent).
inline double Metric(const ServeProcess& s, const std::string& series) {
  return Sample(s.Metrics(), series).value_or(-1);
}

class ServeReal : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("pg_serve_real_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    model_ = new std::string((*dir_ / "tiny.gguf").string());
    Status st = testing::MakeTinyModel(PROSGROW_BINARY, *model_);
    if (!st.ok()) {
      setup_error_ = new std::string(st.ToString());
      return;
    }
    // The shared server: no prefix cache, so a repeated greedy request
    // takes exactly the same arithmetic (the stop-string test relies on it).
    auto s = Serve(
        {"--threads", "2", "--http-threads", "96", "--max-seqs", "64", "--no-prefix-cache", "--policy", "optimized"},
        "shared");
    if (!s.ok()) {
      setup_error_ = new std::string(s.status().ToString());
      return;
    }
    shared_ = s.value().release();
  }
  static void TearDownTestSuite() {
    if (shared_) {
      EXPECT_TRUE(shared_->Alive()) << "the shared server crashed: " << shared_->Log();
      EXPECT_EQ(shared_->Stop(), 0) << shared_->Log();
      delete shared_;
      shared_ = nullptr;
    }
    std::error_code ec;
    if (dir_) fs::remove_all(*dir_, ec);
  }
  void SetUp() override {
    if (setup_error_) FAIL() << *setup_error_;
  }

  static Result<std::unique_ptr<ServeProcess>> Serve(const std::vector<std::string>& args, const std::string& name) {
    return ServeProcess::Start(PROSGROW_BINARY, *model_, args, (*dir_ / ("serve-" + name + ".log")).string());
  }

  static json Post(const ServeProcess& s, const std::string& path, const std::string& body, int* status,
                   const httplib::Headers& headers = {}) {
    auto res = s.Client()->Post(path.c_str(), headers, body, "application/json");
    *status = res ? res->status : -1;
    return res ? json::parse(res->body, nullptr, false) : json();
  }

  static inline fs::path* dir_ = nullptr;
  static inline std::string* model_ = nullptr;
  static inline std::string* setup_error_ = nullptr;
  static inline ServeProcess* shared_ = nullptr;
};

inline void ExpectUsageShape(const json& usage) {
  ASSERT_TRUE(usage.is_object()) << usage.dump();
  EXPECT_GT(usage["prompt_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(usage["total_tokens"], usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>());
  const json& d = usage["prompt_tokens_details"];
  const json& tiers = d["cached_tokens_by_tier"];
  EXPECT_EQ(d["cached_tokens"],
            tiers["device"].get<int64_t>() + tiers["host"].get<int64_t>() + tiers["disk"].get<int64_t>());
}

inline std::string RunShell(const std::string& cmd, int* rc) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *rc = -1;
    return "";
  }
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  *rc = pclose(p);
  return out;
}

}  // namespace pg::serve_real
