#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "doctor/host_checks.h"
#include "doctor/model_check.h"
#include "doctor/network_checks.h"
#include "doctor/preflight.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_source.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using V = CheckResult::Verdict;

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("prosgrow-doctor-" + std::to_string(getpid())) / name;
  fs::create_directories(d);
  return d;
}

// A listening socket on an ephemeral loopback port, held for the test.
struct HeldPort {
  int fd = -1;
  int port = 0;
  HeldPort() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 1);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~HeldPort() { close(fd); }
};

int FreePort() {
  HeldPort p;
  return p.port;  // released on return; a tiny race, fine for tests
}

TEST(Check, FormatIsOneLineWithVerdictAndFix) {
  CheckResult r = CheckResult::Fail("disk tier", "/x is not\nwritable", "fix\nit");
  EXPECT_EQ(FormatCheck(r), "[FAIL] disk tier: /x is not writable -- fix: fix it");
  EXPECT_EQ(FormatCheck(CheckResult::Ok("cpu", "fine")), "[ ok ] cpu: fine");
  EXPECT_TRUE(AnyFailed({CheckResult::Ok("a", ""), r}));
  EXPECT_FALSE(AnyFailed({CheckResult::Warn("a", "", "x"), CheckResult::Skip("b", "")}));
}

TEST(HostChecks, CpuNamesTheKernelLevel) {
  CheckResult r = CheckCpu();
  EXPECT_NE(r.verdict, V::kFail);
  EXPECT_NE(r.detail.find("kernels "), std::string::npos) << r.detail;
}

TEST(HostChecks, MemoryVerdictsFollowTotalAndAvailable) {
  const uint64_t G = 1ull << 30;
  MemoryPlan plan{1 * G, 2 * G, 8 * G};  // 11 GiB
  EXPECT_EQ(CheckMemory(plan, 32 * G, 20 * G).verdict, V::kOk);
  EXPECT_EQ(CheckMemory(plan, 32 * G, 10 * G).verdict, V::kWarn);
  CheckResult fail = CheckMemory(plan, 10 * G, 9 * G);
  EXPECT_EQ(fail.verdict, V::kFail);
  EXPECT_NE(fail.fix.find("--kv-host-mem"), std::string::npos);
  uint64_t total = 0, avail = 0;
  ASSERT_TRUE(ReadMeminfo(&total, &avail));
  EXPECT_GT(total, 0u);
  EXPECT_LE(avail, total);
}

// Block files hold prompt token ids: a tier directory, or a file in it, that
// group or others may read is a warning; one doctor creates is 0700.
TEST(HostChecks, DiskTierReadableByOthersWarns) {
  fs::path dir = TempDir("disk-open");
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  CheckResult open = CheckDiskTier(dir.string(), 1 << 20);
  EXPECT_EQ(open.verdict, V::kWarn) << open.detail;
  EXPECT_NE(open.detail.find("readable by others (mode 0755)"), std::string::npos) << open.detail;
  EXPECT_NE(open.fix.find("chmod"), std::string::npos);
  fs::permissions(dir, fs::perms::owner_all);
  std::ofstream(dir / "block-1") << "x";
  fs::permissions(dir / "block-1", fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  CheckResult file = CheckDiskTier(dir.string(), 1 << 20);
  EXPECT_EQ(file.verdict, V::kWarn) << file.detail;
  EXPECT_NE(file.detail.find("1 files or directories"), std::string::npos) << file.detail;
  fs::permissions(dir / "block-1", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(CheckDiskTier(dir.string(), 1 << 20).verdict, V::kOk);
  const mode_t old_umask = ::umask(0);
  const fs::path made = dir / "new" / "tier";
  CheckResult created = CheckDiskTier(made.string(), 1 << 20);
  ::umask(old_umask);
  EXPECT_EQ(created.verdict, V::kOk) << created.detail;
  EXPECT_EQ(fs::status(made).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(dir / "new").permissions(), fs::perms::owner_all);  // a missing parent too
}

TEST(HostChecks, DiskTierWritableFullAndBroken) {
  fs::path dir = TempDir("disk");
  std::ofstream(dir / "block-1") << std::string(1000, 'x');
  fs::permissions(dir, fs::perms::owner_all);
  fs::permissions(dir / "block-1", fs::perms::owner_read | fs::perms::owner_write);
  CheckResult ok = CheckDiskTier(dir.string(), 1 << 20);
  EXPECT_EQ(ok.verdict, V::kOk) << ok.detail;
  EXPECT_NE(ok.detail.find("holds 1 files"), std::string::npos) << ok.detail;
  EXPECT_EQ(CheckDiskTier(dir.string(), 1ull << 61).verdict, V::kWarn);  // more than any disk
  // A directory below a regular file cannot be created.
  CheckResult bad = CheckDiskTier((dir / "block-1" / "sub").string(), 1 << 20);
  EXPECT_EQ(bad.verdict, V::kFail);
  EXPECT_NE(bad.fix.find("--kv-disk-dir"), std::string::npos);
  EXPECT_EQ(CheckDiskTier("", 0).verdict, V::kSkip);
  // The probe file is gone.
  int n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(".prosgrow", 0) == 0;
  EXPECT_EQ(n, 0);
}

TEST(NetworkChecks, RedisUnreachableFails) {
  CheckResult r = CheckRedis("redis://127.0.0.1:" + std::to_string(FreePort()), 0.5);
  EXPECT_EQ(r.verdict, V::kFail);
  EXPECT_NE(r.detail.find("unreachable"), std::string::npos) << r.detail;
  EXPECT_EQ(CheckRedis("").verdict, V::kSkip);
  EXPECT_EQ(CheckRedis("redis:/x").verdict, V::kFail);
}

// A real redis-server (Debian's package), started and stopped by the test.
class RedisServer {
 public:
  explicit RedisServer(const std::string& policy) : port_(FreePort()) {
    pid_ = fork();
    if (pid_ == 0) {
      freopen("/dev/null", "w", stdout);
      std::string port = std::to_string(port_);
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--loglevel", "warning", "--maxmemory", "64mb", "--maxmemory-policy", policy.c_str(),
             (char*)nullptr);
      _exit(127);
    }
  }
  ~RedisServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // Waits until it answers; false if it never does (not installed).
  bool WaitReady() {
    for (int i = 0; i < 100; ++i) {
      if (CheckRedis(url(), 0.2).verdict != V::kFail) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

TEST(NetworkChecks, RealRedisPolicyVerdicts) {
  if (system("command -v redis-server > /dev/null 2>&1") != 0) GTEST_SKIP() << "redis-server not installed";
  RedisServer lru("allkeys-lru");
  ASSERT_TRUE(lru.WaitReady());
  CheckResult ok = CheckRedis(lru.url());
  EXPECT_EQ(ok.verdict, V::kOk) << ok.detail;
  EXPECT_NE(ok.detail.find("allkeys-lru"), std::string::npos) << ok.detail;
  RedisServer noevict("noeviction");
  ASSERT_TRUE(noevict.WaitReady());
  CheckResult warn = CheckRedis(noevict.url());
  EXPECT_EQ(warn.verdict, V::kWarn) << warn.detail;
  EXPECT_NE(warn.fix.find("allkeys-lru"), std::string::npos);
}

TEST(NetworkChecks, BindableAndHeldPorts) {
  HeldPort held;
  CheckResult busy = CheckBindable("kv events", "127.0.0.1", held.port, "--kv-events");
  EXPECT_EQ(busy.verdict, V::kFail);
  EXPECT_NE(busy.detail.find("cannot be bound"), std::string::npos) << busy.detail;
  EXPECT_EQ(CheckBindable("http port", "127.0.0.1", 0, "--port").verdict, V::kOk);
  EXPECT_EQ(CheckBindable("http port", "no-such-host.invalid", 1, "--host").verdict, V::kFail);
  auto e = ParseTcpEndpoint("tcp://*:5557");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "*");
  EXPECT_EQ(e->port, 5557);
  for (const char* bad : {"udp://h:1", "tcp://h", "tcp://:1", "tcp://h:x", "tcp://h:70000"})
    EXPECT_FALSE(ParseTcpEndpoint(bad).ok()) << bad;
}

std::string TinyModel() { return test::TinyQwen2Model(0); }

// `src` with metadata `key` replaced by a string value.
std::string WithString(const std::string& src, const std::string& key, const std::string& value,
                       const std::string& name) {
  auto f = GgufFile::Open(src);
  EXPECT_TRUE(f.ok());
  GgufWriter w;
  for (const auto& [k, v] : (*f)->metadata()) EXPECT_TRUE(w.SetValue(k, v).ok());
  w.SetString(key, value);
  for (const GgufTensorInfo& t : (*f)->tensors())
    EXPECT_TRUE(w.AddTensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes)).ok());
  std::string out = (TempDir("models") / name).string();
  EXPECT_TRUE(w.Write(out).ok());
  return out;
}

TEST(ModelCheck, GoodModelNamesArchAndPreTokenizer) {
  ModelCheck m = CheckModelFile(TinyModel());
  EXPECT_EQ(m.result.verdict, V::kOk) << m.result.detail;
  EXPECT_NE(m.result.detail.find("arch qwen2"), std::string::npos) << m.result.detail;
  EXPECT_NE(m.result.detail.find("pre-tokenizer"), std::string::npos);
  EXPECT_GT(m.file_bytes, 0u);
}

// serve's one open: the check reads the mapping it is given, not the path
// (here one that does not exist), and names the path in its line.
TEST(ModelCheck, ReadsTheAlreadyOpenedFile) {
  auto file = OpenModelSource(TinyModel());
  ASSERT_TRUE(file.ok());
  ModelCheck m = CheckModelFile("/nonexistent/served.gguf", file->get());
  EXPECT_EQ(m.result.verdict, V::kOk) << m.result.detail;
  EXPECT_EQ(m.file_bytes, (*file)->size_bytes());
  EXPECT_NE(m.result.detail.find("/nonexistent/served.gguf"), std::string::npos) << m.result.detail;
}

TEST(ModelCheck, FailuresNameTheProblem) {
  ModelCheck missing = CheckModelFile("/nonexistent/model.gguf");
  EXPECT_EQ(missing.result.verdict, V::kFail);
  EXPECT_EQ(missing.file_bytes, 0u);
  fs::path junk = TempDir("models") / "junk.gguf";
  std::ofstream(junk) << "not a gguf file at all";
  EXPECT_EQ(CheckModelFile(junk.string()).result.verdict, V::kFail);
  ModelCheck arch = CheckModelFile(WithString(TinyModel(), "general.architecture", "bert", "bert.gguf"));
  EXPECT_EQ(arch.result.verdict, V::kFail);
  EXPECT_NE(arch.result.detail.find("bert"), std::string::npos) << arch.result.detail;
  ModelCheck pre = CheckModelFile(WithString(TinyModel(), "tokenizer.ggml.pre", "no-such-pre", "pre.gguf"));
  EXPECT_EQ(pre.result.verdict, V::kFail);
  EXPECT_NE(pre.result.detail.find("no-such-pre"), std::string::npos) << pre.result.detail;
}

TEST(Preflight, RunsEveryCheckInOrder) {
  PreflightPlan plan;
  plan.model_path = TinyModel();
  plan.kv_device_bytes = 1 << 20;
  plan.http_host = "127.0.0.1";
  plan.http_port = 0;
  std::vector<CheckResult> r = RunPreflight(plan);
  ASSERT_EQ(r.size(), 9u);
  const char* names[] = {"cpu",   "model",     "memory",       "kv cache", "disk tier",
                         "redis", "kv events", "block hashes", "http port"};
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].name, names[i]);
  EXPECT_FALSE(AnyFailed(r));
  HeldPort held;
  plan.kv_events = "tcp://*:" + std::to_string(held.port);
  EXPECT_TRUE(AnyFailed(RunPreflight(plan)));
}

TEST(Preflight, PlanFromConfigAppliesTierDefaults) {
  EngineConfig c;
  c.kv_device_bytes = 100;
  c.kv_disk_dir = "/tmp/x";
  PreflightPlan p = PlanFromConfig(c);
  EXPECT_EQ(p.kv_host_bytes, 400u);
  EXPECT_EQ(p.kv_disk_bytes, 4ull << 30);
  c.policy = ServePolicy::kBaseline;
  p = PlanFromConfig(c);
  EXPECT_EQ(p.kv_host_bytes, 0u);
  EXPECT_EQ(p.kv_disk_dir, "");
}

}  // namespace
}  // namespace pg
