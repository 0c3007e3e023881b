// Issue 48: MLA models (glm-dsa with its lightning indexer, deepseek2) through
// every KV tier. A block carries the latent rows and, on glm-dsa, the indexer
// keys of its tokens; the prompts here are longer than the indexer's top-k
// (16 on the fixture), so a restored block whose indexer keys were lost or
// misplaced would change which keys the sparse attention reads, and the
// outputs with them. Each run is compared bit for bit with one whose blocks
// never left the device (or, for the replicas, with a serve that has no cache):
//   * two interleaved multi-turn conversations through a device tier too small
//     for both, so blocks go down to host and disk and come back;
//   * a second process that reads the first one's disk tier;
//   * two replicas sharing a Redis: the second one continues from the first's
//     blocks.
// The negative (losing a block's indexer keys changes the next token) is
// model_invariance_test.cc's DsaCache test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "kv/redis_test_server.h"
#include "kv_remote_util.h"
#include "test_util.h"
#include "testing/multi_turn_workload.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

class KvMlaTiers : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    model_ = test::Fixture(std::string("models/") + GetParam() + ".gguf");
    if (!fs::exists(model_)) GTEST_SKIP() << "needs ../shared/fixtures (absent): " << model_;
    dir_ = fs::temp_directory_path() / ("pg_kv_mla_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string model_;
  fs::path dir_;
};

// Bit-identical: the same tokens and the same logprob bits at every step.
void ExpectBitIdentical(const std::vector<test::Conversation>& want, const std::vector<test::Conversation>& got) {
  for (size_t c = 0; c < want.size(); ++c)
    for (size_t t = 0; t < want[c].results.size(); ++t) {
      SCOPED_TRACE("conversation " + std::to_string(c) + " turn " + std::to_string(t));
      const auto& w = want[c].results[t];
      const auto& g = got[c].results[t];
      EXPECT_EQ(w.tokens, g.tokens);
      ASSERT_EQ(w.logprobs.size(), g.logprobs.size());
      EXPECT_EQ(0, std::memcmp(w.logprobs.data(), g.logprobs.data(), w.logprobs.size() * sizeof(float)));
    }
}

TEST_P(KvMlaTiers, MultiTurnThroughHostAndDiskIsBitIdentical) {
  EngineConfig base = test::ReferenceConfig(model_);
  base.attention = AttentionMode::kTiledF32;
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const ModelConfig& mc = (*plain)->model().config();
  ASSERT_TRUE(mc.mla.enabled);
  const int32_t vocab = static_cast<int32_t>(mc.n_vocab);
  const test::MultiTurnWorkload workload;  // the first prompt alone is 60 tokens, past top-k 16
  auto want = test::RunConversations(**plain, workload, vocab);

  const EngineConfig tiered = test::TieredConfig(base, mc, 18, 10, (dir_ / "disk").string());
  auto cached = Engine::Create(tiered);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  auto got = test::RunConversations(**cached, workload, vocab);
  ASSERT_NO_FATAL_FAILURE(test::ExpectSameOutputsThroughTheTiers(want, got, (*cached)->cache_counters()));
  ExpectBitIdentical(want, got);
}

TEST_P(KvMlaTiers, SecondProcessReadsTheDiskTier) {
  const std::string prompt =
      "An agent returns to the same long context after every tool call, so the context should stay cached across "
      "memory tiers instead of being recomputed each time it comes back to the model.";
  const std::string args = "generate -m " + model_ + " -p '" + prompt +
                           "' -n 8 --temp 0 --attn fast --json --kv-disk-dir " + (dir_ / "disk").string() +
                           " --kv-disk-size 64MiB --cache-report --threads 2";
  const std::string plain_args = "generate -m " + model_ + " -p '" + prompt +
                                 "' -n 8 --temp 0 --attn fast --json "
                                 "--threads 2 --no-prefix-cache";
  auto plain = test::RunProsgrow(plain_args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto first = test::RunProsgrow(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = test::RunProsgrow(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  // The same tokens and logprobs (the JSON's digits are the float's shortest
  // round trip, so equal text is equal bits); only cached_tokens may differ.
  auto answer = [](const std::string& out) {
    nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    if (j.is_object()) j.erase("cached_tokens");
    return j.dump();
  };
  EXPECT_EQ(answer(plain.out), answer(first.out));
  EXPECT_EQ(answer(first.out), answer(second.out));
  EXPECT_NE(answer(second.out), nlohmann::json::parse("null").dump());
  auto disk_tokens = [](const std::string& err) {
    auto line = err.find("cache: prompt");
    auto p = line == std::string::npos ? line : err.find("disk ", line);
    return p == std::string::npos ? -1 : std::atoll(err.c_str() + p + 5);
  };
  EXPECT_EQ(disk_tokens(first.err), 0) << first.err;
  EXPECT_GT(disk_tokens(second.err), 16) << second.err;  // past the indexer's top-k
}

TEST_P(KvMlaTiers, TwoReplicasShareBlocksThroughRedis) {
  testing::RedisTestServer redis;
  if (std::string why = redis.Start(); !why.empty()) GTEST_SKIP() << why;
  std::vector<int32_t> turn1 = kv_remote_test::Tokens(1, 100), turn2 = turn1;
  for (int32_t x : kv_remote_test::Tokens(2, 40)) turn2.push_back(x);
  const std::vector<std::string> fast = {"--attn", "fast"};

  auto ref = testing::ServeProcess::Start(PROSGROW_BINARY, model_, {"--threads", "1", "--attn", "fast"},
                                          (dir_ / "ref.log").string());
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const kv_remote_test::Answer want = kv_remote_test::Complete(**ref, turn2);
  ASSERT_EQ(want.status, 200) << want.text;
  EXPECT_EQ((*ref)->Stop(), 0);

  auto a = kv_remote_test::StartReplica(model_, redis.url(), 10000, fast, (dir_ / "a.log").string());
  auto b = kv_remote_test::StartReplica(model_, redis.url(), 10000, fast, (dir_ / "b.log").string());
  ASSERT_TRUE(a && b);
  ASSERT_EQ(kv_remote_test::Complete(*a, turn1).status, 200);
  ASSERT_TRUE(testing::WaitUntil([&] {
    return kv_remote_test::Metric(*a, "prosgrow_kv_remote_writes_total") >= 1 &&
           kv_remote_test::Metric(*a, "prosgrow_kv_remote_write_queue") == 0;
  })) << a->Metrics();
  const kv_remote_test::Answer got = kv_remote_test::Complete(*b, turn2);
  ASSERT_EQ(got.status, 200) << got.text;
  EXPECT_GT(got.remote, 16) << "B read A's blocks from Redis, past the indexer's top-k";
  EXPECT_EQ(got.cached, got.remote);
  EXPECT_EQ(got.text, want.text);
  // /metrics states what a token costs: latent rows, and on glm-dsa the
  // indexer keys (the fixture: 3 layers x (40 + 32) x f16 = 432 bytes, 2
  // indexer layers x 64 x f16 = 256), and the block those make.
  const double latent = kv_remote_test::Metric(*b, R"(prosgrow_kv_token_bytes{part="latent"})");
  const double indexer = kv_remote_test::Metric(*b, R"(prosgrow_kv_token_bytes{part="indexer"})");
  EXPECT_EQ(kv_remote_test::Metric(*b, R"(prosgrow_kv_token_bytes{part="kv"})"), -1);
  if (std::string(GetParam()) == "tiny-glm-dsa-spm") {
    EXPECT_EQ(latent, 432);
    EXPECT_EQ(indexer, 256);
  } else {
    EXPECT_GT(latent, 0);
    EXPECT_EQ(indexer, -1);
  }
  EXPECT_EQ(kv_remote_test::Metric(*b, "prosgrow_kv_block_bytes"), 16 * (latent + std::max(indexer, 0.0)));
  EXPECT_EQ(a->Stop(), 0) << a->Log();
  EXPECT_EQ(b->Stop(), 0) << b->Log();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KvMlaTiers, ::testing::Values("tiny-glm-dsa-spm", "tiny-deepseek2-gpt2"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::erase(s, '-');
                           return s;
                         });

}  // namespace
}  // namespace pg
