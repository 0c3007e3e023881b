// Issue 16: the remote KV tier end to end. A real redis-server (started
// here, skipped when it is not installed) and real `prosgrow serve` replicas
// on the tiny synthetic model:
//   * replica A serves turn 1 with --kv-remote; replica B, a fresh process
//     with nothing cached, serves turn 2 and reports cached tokens from tier
//     "remote", with the output of a serve that has no Redis at all;
//   * four faults, each its own test: Redis stopped, slowed (SIGSTOP, a server
//     that accepts and never answers), flushed, and one stored value
//     corrupted. Each time B answers 200 with the same output as without
//     Redis, and the fault shows in its counters.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "kv/redis_test_server.h"
#include "kv_remote_util.h"
#include "test_util.h"
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

// Turn 1 is 100 tokens (6 full blocks of 16; with at most 8 generated tokens
// no 7th block fills, so every block A stores is a prefix block of turn 2);
// turn 2 extends it by 40.
const std::vector<int32_t>& Turn1() {
  static const std::vector<int32_t> t = Tokens(1, 100);
  return t;
}
const std::vector<int32_t>& Turn2() {
  static const std::vector<int32_t> t = [] {
    std::vector<int32_t> v = Turn1();
    for (int32_t x : Tokens(2, 40)) v.push_back(x);
    return v;
  }();
  return t;
}

class KvRemote : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("pg_kv_remote_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "tiny.gguf").string();
    const Status st = testing::MakeTinyModel(PROSGROW_BINARY, model_);
    ASSERT_TRUE(st.ok()) << st.ToString();
    // The reference: turn 2 on a serve without Redis, nothing cached.
    auto ref = ServeProcess::Start(PROSGROW_BINARY, model_, {"--threads", "1"}, (dir_ / "ref.log").string());
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    const Answer a = Complete(**ref, Turn2());
    ASSERT_EQ(a.status, 200) << a.text;
    EXPECT_EQ(a.cached, 0);
    reference_ = a.text;
    EXPECT_EQ((*ref)->Stop(), 0);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void SetUp() override {
    if (std::string why = redis_.Start(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_FALSE(reference_.empty());
  }
  void TearDown() override {
    for (auto* s : {&a_, &b_}) {
      if (!*s) continue;
      EXPECT_TRUE((*s)->Alive()) << (*s)->Log();
      EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
    }
  }

  // A replica whose remote lookups wait up to timeout_ms. A generous
  // deadline by default, so a loaded machine never turns a hit into a miss;
  // only the slow-Redis test, where Redis never answers, gives a short one.
  std::unique_ptr<ServeProcess> Replica(const std::string& name, int timeout_ms = kPatientMs) {
    static int n = 0;  // a fresh log per process: the port is read back from it
    return StartReplica(model_, redis_.url(), timeout_ms, {}, (dir_ / (name + std::to_string(++n) + ".log")).string());
  }

  // Replica A serves turn 1 and stores its blocks in Redis; B is started
  // with lookups that wait up to b_timeout_ms.
  void TurnOneOnA(int b_timeout_ms = kPatientMs) {
    a_ = Replica("a");
    b_ = Replica("b", b_timeout_ms);
    ASSERT_TRUE(a_ && b_);
    const Answer t1 = Complete(*a_, Turn1());
    ASSERT_EQ(t1.status, 200) << t1.text;
    ASSERT_TRUE(testing::WaitUntil([&] {
      return Metric(*a_, "prosgrow_kv_remote_writes_total") >= 6 && Metric(*a_, "prosgrow_kv_remote_write_queue") == 0;
    })) << a_->Metrics();
    ASSERT_EQ(redis_.Keys("pgkv:*").size(), 6u);
  }

  static constexpr int kPatientMs = 10000;  // the flag's maximum
  static inline fs::path dir_;
  static inline std::string model_;
  static inline std::string reference_;
  RedisTestServer redis_;
  std::unique_ptr<ServeProcess> a_, b_;
};

TEST_F(KvRemote, SecondReplicaReadsTheFirstOnesBlocks) {
  TurnOneOnA();
  const Answer t2 = Complete(*b_, Turn2());
  ASSERT_EQ(t2.status, 200) << t2.text;
  EXPECT_EQ(t2.remote, 96);  // turn 1's 6 full blocks
  EXPECT_EQ(t2.cached, 96);
  EXPECT_EQ(t2.text, reference_);
  EXPECT_EQ(Metric(*b_, "prosgrow_kv_remote_hit_blocks_total"), 6);
  EXPECT_EQ(Metric(*b_, "prosgrow_cached_prompt_tokens_total{tier=\"remote\"}"), 96);
  // B writes turn 2's new blocks behind (after its answer: waited for, not
  // assumed): A can then continue the conversation from Redis.
  EXPECT_TRUE(testing::WaitUntil([&] {
    return Metric(*b_, "prosgrow_kv_remote_writes_total") >= 2 && Metric(*b_, "prosgrow_kv_remote_write_queue") == 0;
  })) << b_->Metrics();
}

TEST_F(KvRemote, RedisStoppedIsARecompute) {
  TurnOneOnA();
  // Killed while requests are in flight on B: each one is answered, the same.
  std::vector<Answer> during(4);
  std::vector<std::thread> clients;
  for (Answer& a : during) clients.emplace_back([&a, this] { a = Complete(*b_, Turn2()); });
  redis_.Kill();
  for (std::thread& t : clients) t.join();
  for (const Answer& a : during) {
    ASSERT_EQ(a.status, 200) << a.text;
    EXPECT_EQ(a.text, reference_);
  }
  // And after: a prompt B has never seen asks Redis, finds it gone, recomputes.
  const Answer t2 = Complete(*b_, Tokens(9, 60));
  ASSERT_EQ(t2.status, 200) << t2.text;
  EXPECT_EQ(t2.remote, 0);
  EXPECT_GE(Metric(*b_, "prosgrow_kv_remote_errors_total") + Metric(*b_, "prosgrow_kv_remote_skipped_total"), 1);
  // A keeps serving too (its writes now drop).
  const Answer again = Complete(*a_, Turn2());
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.text, reference_);
}

TEST_F(KvRemote, RedisSlowIsARecomputeAfterTheTimeout) {
  TurnOneOnA(/*b_timeout_ms=*/200);
  redis_.Pause();  // accepts connections, never answers
  const Answer t2 = Complete(*b_, Turn2());
  redis_.Resume();
  ASSERT_EQ(t2.status, 200) << t2.text;
  EXPECT_EQ(t2.remote, 0);
  EXPECT_EQ(t2.text, reference_);
  EXPECT_GE(Metric(*b_, "prosgrow_kv_remote_errors_total"), 1);
}

TEST_F(KvRemote, RedisFlushedIsARecompute) {
  TurnOneOnA();
  ASSERT_EQ(redis_.Command("FLUSHALL"), "OK");
  const Answer t2 = Complete(*b_, Turn2());
  ASSERT_EQ(t2.status, 200) << t2.text;
  EXPECT_EQ(t2.remote, 0);
  EXPECT_EQ(t2.text, reference_);
  EXPECT_EQ(Metric(*b_, "prosgrow_kv_remote_hit_blocks_total"), 0);
  EXPECT_GE(Metric(*b_, "prosgrow_kv_remote_miss_blocks_total"), 6);
}

TEST_F(KvRemote, CorruptedValueIsNeverLoaded) {
  TurnOneOnA();
  // Alter one payload byte of one stored block.
  const std::vector<std::string> keys = redis_.Keys("pgkv:*");
  ASSERT_FALSE(keys.empty());
  const std::string v = redis_.Command({"GET", keys[0]});
  ASSERT_GT(v.size(), 400u);
  const size_t off = v.size() - 100;
  std::string bad = v;
  bad[off] = char(v[off] ^ 0x5a);
  ASSERT_EQ(redis_.Command({"SETRANGE", keys[0], std::to_string(off), bad.substr(off, 1)}), std::to_string(v.size()));
  const Answer t2 = Complete(*b_, Turn2());
  ASSERT_EQ(t2.status, 200) << t2.text;
  EXPECT_LT(t2.remote, 96);  // the chain stops before the altered block
  EXPECT_EQ(t2.text, reference_);
  EXPECT_EQ(Metric(*b_, "prosgrow_kv_remote_corrupt_total"), 1);
  EXPECT_EQ(Metric(*b_, "prosgrow_kv_remote_hit_blocks_total") * 16, double(t2.remote));
  // The bad value was deleted; B recomputed that block and wrote a good one behind.
  ASSERT_TRUE(testing::WaitUntil([&] { return Metric(*b_, "prosgrow_kv_remote_write_queue") == 0; }));
  EXPECT_NE(redis_.Command({"GET", keys[0]}), bad);
}

// Bad remote-tier flags: one line naming the flag, non-zero exit, no server.
TEST_F(KvRemote, BadFlagsAreRefusedWithOneLine) {
  const std::string m = " serve -m " + model_ + " --port 0 ";
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"--kv-remote-size 1GiB", "--kv-remote-size needs --kv-remote"},
      {"--kv-remote " + redis_.url() + " --no-prefix-cache", "--kv-remote needs the prefix cache"},
      {"--kv-remote http://127.0.0.1:1", "not a redis:// URL"},
      {"--kv-remote redis://127.0.0.1:1", "redis"},  // unreachable: doctor's check refuses the start
      {"--kv-remote " + redis_.url() + " --kv-remote-size lots", "--kv-remote-size: invalid size 'lots'"},
      {"--kv-remote " + redis_.url() + " --kv-remote-timeout-ms 0", "--kv-remote-timeout-ms"},
  };
  for (const Case& c : cases) {
    const test::RunResult r = test::RunProsgrow(m + c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << " -> " << r.err;
  }
}

}  // namespace
}  // namespace pg
