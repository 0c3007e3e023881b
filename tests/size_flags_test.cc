// Issue 50: every size flag's 0 does what its --help says (docs/kv-cache.md,
// "What 0 means for each size flag"), against the real `prosgrow serve` and
// `prosgrow route`: tiers read from /metrics, refusals from the exit code and
// stderr. And the disk tier's files at rest: a server started under umask
// 000 still makes its directories 0700 and its block files 0600.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Sample;
using testing::ServeProcess;

class SizeFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pg_size_flags_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "tiny.gguf").string();
    const Status st = testing::MakeTinyModel(PROSGROW_BINARY, model_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<ServeProcess> Serve(const std::vector<std::string>& flags, const std::string& log) {
    std::vector<std::string> args = {"--threads", "1", "--kv-device-mem", "1MiB"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto s = ServeProcess::Start(PROSGROW_BINARY, model_, args, (dir_ / log).string());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return nullptr;
    // The KV gauges are published after the first engine step: wait for the device tier's.
    EXPECT_TRUE(
        testing::WaitUntil([&] { return Metric(**s, "prosgrow_kv_capacity_blocks{tier=\"device\"}") > 0; }, 30));
    return std::move(*s);
  }

  // A 64-token completion (4 blocks of 16) asking to pin its prefix.
  static int CompleteWithPin(ServeProcess& s) {
    json body = {{"prompt", std::vector<int>(64, 5)},
                 {"max_tokens", 2},
                 {"kv_hints", json::array({{{"action", "pin"}, {"prefix_tokens", 64}, {"ttl_s", 600}}})}};
    auto r = s.Client()->Post("/v1/completions", body.dump(), "application/json");
    return r ? r->status : 0;
  }

  static double Metric(ServeProcess& s, const std::string& series) { return Sample(s.Metrics(), series).value_or(-1); }

  fs::path dir_;
  std::string model_;
};

TEST_F(SizeFlags, DefaultsMakeEveryTierAndHonourHints) {
  // The control for the zeros below: the same metrics are non-zero by default.
  const mode_t old_umask = ::umask(0);
  const fs::path disk = dir_ / "parent" / "kv";
  auto s = Serve({"--kv-disk-dir", disk.string(), "--kv-write-policy", "write-through"}, "default.log");
  ::umask(old_umask);
  ASSERT_TRUE(s);
  EXPECT_EQ(Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"host\"}"),
            4 * Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"device\"}"));
  // The disk tier comes up behind the server (its directory is scanned first).
  EXPECT_TRUE(testing::WaitUntil([&] { return Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"disk\"}") > 0; }));
  ASSERT_EQ(CompleteWithPin(*s), 200);
  EXPECT_GT(Metric(*s, "prosgrow_kv_hint_held_blocks{hold=\"pin\"}"), 0);
  // Files at rest, made under umask 000: directories 0700, block files 0600.
  std::vector<fs::path> blocks;
  ASSERT_TRUE(testing::WaitUntil([&] {
    blocks.clear();
    std::error_code ec;
    for (fs::recursive_directory_iterator it(disk, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".kvb") blocks.push_back(it->path());
    return !blocks.empty();
  })) << "no block file was written under "
      << disk;
  auto mode = [](const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  for (const fs::path& d : {dir_ / "parent", disk, disk / "tmp", blocks[0].parent_path()})
    EXPECT_EQ(mode(d), 0700u) << d;
  for (const fs::path& f : blocks) EXPECT_EQ(mode(f), 0600u) << f;
}

TEST_F(SizeFlags, ZeroTurnsTiersBudgetsAndQuotasOff) {
  const fs::path disk = dir_ / "unused-disk";
  auto s = Serve({"--kv-host-mem", "0", "--kv-disk-dir", disk.string(), "--kv-disk-size", "0", "--kv-pin-budget", "0",
                  "--kv-retain-budget", "0", "--kv-session-quota-device", "0", "--kv-session-quota-host", "0"},
                 "zeros.log");
  ASSERT_TRUE(s);
  EXPECT_GT(Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"device\"}"), 0);
  EXPECT_EQ(Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"host\"}"), 0);  // --kv-host-mem 0: no host tier
  EXPECT_EQ(Metric(*s, "prosgrow_kv_capacity_blocks{tier=\"disk\"}"), 0);  // --kv-disk-size 0: no disk tier
  EXPECT_FALSE(fs::exists(disk));
  ASSERT_EQ(CompleteWithPin(*s), 200);  // a full budget refuses the hint, not the request
  EXPECT_EQ(Metric(*s, "prosgrow_kv_hint_held_blocks{hold=\"pin\"}"), 0);     // --kv-pin-budget 0
  EXPECT_EQ(Metric(*s, "prosgrow_kv_hint_held_blocks{hold=\"retain\"}"), 0);  // --kv-retain-budget 0
  EXPECT_GE(Metric(*s, "prosgrow_kv_hints_refused_total"), 1);
  EXPECT_EQ(Metric(*s, "prosgrow_kv_quota_evictions_total"), 0);  // quotas 0: none
}

TEST_F(SizeFlags, ZeroIsRefusedWhereATierOrLimitCannotBeEmpty) {
  struct Case {
    std::string args;
    std::string flag;
  } cases[] = {
      {"serve -m " + model_ + " --port 0 --kv-device-mem 0", "--kv-device-mem"},
      {"serve -m " + model_ + " --port 0 --max-body-bytes 0", "--max-body-bytes"},
      {"serve -m " + model_ + " --port 0 --max-header-bytes 0", "--max-header-bytes"},
      {"serve -m " + model_ + " --port 0 --max-url-bytes 0", "--max-url-bytes"},
      {"route --port 0 --replica http://127.0.0.1:9 --max-body-bytes 0", "--max-body-bytes"},
      {"route --port 0 --replica http://127.0.0.1:9 --max-header-bytes 0", "--max-header-bytes"},
      {"route --port 0 --replica http://127.0.0.1:9 --max-url-bytes 0", "--max-url-bytes"},
  };
  for (const Case& c : cases) {
    test::RunResult r = test::RunProsgrow(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << c.args << ": " << r.err;
  }
}

}  // namespace
}  // namespace pg
