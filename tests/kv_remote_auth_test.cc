// Issue 23: the remote KV tier trusts nobody by default. A real redis-server
// (started here; skipped when it is not installed) and real `prosgrow serve`
// replicas on the tiny synthetic model:
//   * with --kv-remote-secret-file, a record under a real key with a wrong
//     HMAC is never served: the next request recomputes, with the output of
//     a serve without Redis, and the rejection is counted on /metrics;
//   * without a secret serve warns that the tier trusts every Redis writer;
//   * AUTH: redis-server with --requirepass (password from
//     --kv-remote-password-file, then from PROSGROW_REDIS_PASSWORD), and an
//     ACL user (redis://USER@HOST with the password from the file); the
//     password never appears in the log, even on a bad URL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kv/redis_test_server.h"
#include "kv_remote_util.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using kv_remote_test::Answer;
using kv_remote_test::Complete;
using kv_remote_test::Metric;
using kv_remote_test::StartReplica;
using kv_remote_test::Tokens;
using testing::RedisTestServer;
using testing::ServeProcess;

constexpr const char* kPassword = "hunter2-redis-password";

// Seed 17's tokens (100 of them: 6 full blocks of 16).
std::vector<int32_t> Prompt(int n) { return Tokens(17, n); }

class KvRemoteAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisTestServer::Available()) GTEST_SKIP() << "redis-server is not on PATH";
    dir_ = fs::temp_directory_path() / ("pg_kv_remote_auth_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "tiny.gguf").string();
    const Status st = testing::MakeTinyModel(PROSGROW_BINARY, model_);
    ASSERT_TRUE(st.ok()) << st.ToString();
    secret_ = File("secret", "a-32-byte-secret-for-the-hmac-key");
    password_file_ = File("password", kPassword);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string File(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text << "\n";
    return path;
  }
  std::unique_ptr<ServeProcess> Replica(const std::string& url, std::vector<std::string> extra) {
    return StartReplica(model_, url, 5000, extra, (dir_ / ("r" + std::to_string(++n_) + ".log")).string());
  }
  // Replica a serves the prompt and stores its blocks; returns its answer.
  Answer Store(ServeProcess& a, size_t blocks) {
    const Answer t = Complete(a, Prompt(100));
    EXPECT_EQ(t.status, 200) << t.text;
    EXPECT_TRUE(testing::WaitUntil([&] {
      return Metric(a, "prosgrow_kv_remote_writes_total") >= double(blocks) &&
             Metric(a, "prosgrow_kv_remote_write_queue") == 0;
    })) << a.Metrics();
    return t;
  }

  fs::path dir_;
  std::string model_, secret_, password_file_;
  int n_ = 0;
};

TEST_F(KvRemoteAuth, ForgedRecordIsNeverServed) {
  RedisTestServer redis;
  ASSERT_EQ(redis.Start(), "");
  auto a = Replica(redis.url(), {"--kv-remote-secret-file", secret_});
  ASSERT_TRUE(a);
  const Answer first = Store(*a, 6);
  // The signed tier works: a fresh replica reads all 6 blocks.
  auto b = Replica(redis.url(), {"--kv-remote-secret-file", secret_});
  ASSERT_TRUE(b);
  const Answer ok = Complete(*b, Prompt(100));
  EXPECT_EQ(ok.remote, 96);
  EXPECT_EQ(ok.text, first.text);
  EXPECT_EQ(Metric(*b, "prosgrow_kv_remote_rejected_total{reason=\"hmac\"}"), 0);

  // Forge every record: the real key, the real record, a wrong tag (the
  // last byte flipped), as someone who can write to Redis but has no secret.
  const std::vector<std::string> keys = redis.Keys("pgkv:*");
  ASSERT_EQ(keys.size(), 6u);
  for (const std::string& k : keys) {
    std::string v = redis.Command({"GET", k});
    ASSERT_GT(v.size(), 32u);
    v.back() = char(v.back() ^ 0x5a);
    ASSERT_EQ(redis.Command({"SET", k, v}), "OK");
  }
  auto c = Replica(redis.url(), {"--kv-remote-secret-file", secret_});
  ASSERT_TRUE(c);
  const Answer forged = Complete(*c, Prompt(100));
  ASSERT_EQ(forged.status, 200) << forged.text;
  EXPECT_EQ(forged.remote, 0);
  EXPECT_EQ(forged.text, first.text);                                              // recomputed: identical output
  EXPECT_EQ(Metric(*c, "prosgrow_kv_remote_rejected_total{reason=\"hmac\"}"), 1);  // the chain stops at block 0
  EXPECT_EQ(Metric(*c, "prosgrow_kv_remote_corrupt_total"), 0);

  // A replica without the secret cannot read signed records either (a record
  // without a tag has another size), and it warns at start.
  auto d = Replica(redis.url(), {});
  ASSERT_TRUE(d);
  EXPECT_NE(d->Log().find("no --kv-remote-secret-file"), std::string::npos) << d->Log();
  for (auto* s : {&a, &b, &c, &d}) EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
}

TEST_F(KvRemoteAuth, RequirepassFromFileAndEnvironment) {
  RedisTestServer redis;
  redis.SetCredentials("", kPassword);
  ASSERT_EQ(redis.Start({"--requirepass", kPassword}), "");
  auto a = Replica(redis.url(), {"--kv-remote-password-file", password_file_});
  ASSERT_TRUE(a);
  const Answer first = Store(*a, 6);
  ::setenv("PROSGROW_REDIS_PASSWORD", kPassword, 1);
  auto b = Replica(redis.url(), {});
  ::unsetenv("PROSGROW_REDIS_PASSWORD");
  ASSERT_TRUE(b);
  const Answer t = Complete(*b, Prompt(100));
  EXPECT_EQ(t.remote, 96) << b->Metrics();
  EXPECT_EQ(t.text, first.text);
  // Without the password serve's preflight refuses to start, in one line that
  // says a password is needed (serve already refuses a Redis it cannot reach).
  auto c = ServeProcess::Start(PROSGROW_BINARY, model_,
                               {"--threads", "1", "--kv-remote", redis.url(), "--kv-remote-timeout-ms", "5000"},
                               (dir_ / "no-password.log").string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("needs a password"), std::string::npos) << c.status().ToString();
  EXPECT_EQ(c.status().message().find(kPassword), std::string::npos) << c.status().ToString();
  for (auto* s : {&a, &b}) {
    EXPECT_EQ((*s)->Log().find(kPassword), std::string::npos) << (*s)->Log();
    EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
  }
}

TEST_F(KvRemoteAuth, AclUser) {
  RedisTestServer redis;
  ASSERT_EQ(redis.Start(), "");
  ASSERT_EQ(redis.Command({"ACL", "SETUSER", "kvuser", "on", std::string(">") + kPassword, "~pgkv:*", "+@all"}), "OK");
  ASSERT_EQ(redis.Command({"ACL", "SETUSER", "default", "off"}), "OK");
  redis.SetCredentials("kvuser", kPassword);
  const std::string url = "redis://kvuser@127.0.0.1:" + std::to_string(redis.port());
  auto a = Replica(url, {"--kv-remote-password-file", password_file_});
  ASSERT_TRUE(a);
  const Answer first = Store(*a, 6);
  EXPECT_EQ(redis.Keys("pgkv:*").size(), 6u);
  auto b = Replica(url, {"--kv-remote-password-file", password_file_});
  ASSERT_TRUE(b);
  const Answer t = Complete(*b, Prompt(100));
  EXPECT_EQ(t.remote, 96) << b->Metrics();
  EXPECT_EQ(t.text, first.text);
  for (auto* s : {&a, &b}) {
    EXPECT_EQ((*s)->Log().find(kPassword), std::string::npos) << (*s)->Log();
    EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
  }
}

// A bad --kv-remote URL is a one-line error that does not show its password.
TEST_F(KvRemoteAuth, BadUrlNeverPrintsThePassword) {
  auto s = ServeProcess::Start(PROSGROW_BINARY, model_,
                               {"--threads", "1", "--kv-remote", std::string("redis://u:") + kPassword + "@h:0"},
                               (dir_ / "bad.log").string(), 60);
  ASSERT_FALSE(s.ok());
  std::ifstream in(dir_ / "bad.log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("bad port"), std::string::npos) << log;
  EXPECT_EQ(log.find(kPassword), std::string::npos) << log;
}

}  // namespace
}  // namespace pg
