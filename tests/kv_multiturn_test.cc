// Issue-3 end-to-end: two interleaved multi-turn conversations through the
// engine with a device tier too small for both, so earlier turns go to host
// and disk and come back. Every turn's output must equal the run with the
// prefix cache off, and the reported reuse must equal the reusable tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/engine.h"
#include "synth/make_model.h"
#include "test_util.h"
#include "testing/multi_turn_workload.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// A tiny synthetic model shared by the tests in this file (tiny_model.h).
const std::string& TinyModel() {
  static const std::string path = test::TinyQwen2Model(7);
  return path;
}

int64_t Lcp(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

void CheckTieredCacheReuse(AttentionMode attention) {
  const std::string& model = TinyModel();
  ASSERT_FALSE(model.empty()) << "make-model failed";
  fs::path disk = fs::temp_directory_path() /
                  ("pg_kv_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(static_cast<int>(attention)));
  fs::remove_all(disk);

  EngineConfig base = test::ReferenceConfig(model);
  base.attention = attention;
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  const test::MultiTurnWorkload workload;  // 5 turns, seed 11, 12 tokens
  const int turns = workload.turns;
  auto want = test::RunConversations(**plain, workload, vocab);

  // Room for one conversation's longest prompt and a little: the other must leave.
  const EngineConfig tiered = test::TieredConfig(base, (*plain)->model().config(), 18, 10, disk.string());
  auto cached = Engine::Create(tiered);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  auto got = test::RunConversations(**cached, workload, vocab);
  ASSERT_NO_FATAL_FAILURE(test::ExpectSameOutputsThroughTheTiers(want, got, (*cached)->cache_counters()));

  const int64_t page = tiered.page_tokens;
  for (int c = 0; c < 2; ++c) {
    std::vector<std::vector<int32_t>> computed;  // token sequences whose KV was computed before
    for (int t = 0; t < turns; ++t) {
      SCOPED_TRACE("conversation " + std::to_string(c) + " turn " + std::to_string(t));
      const auto& w = want[c].results[t];
      const auto& g = got[c].results[t];
      // Reusable: the longest prefix shared with anything computed earlier in
      // either conversation, in whole pages, leaving one token to compute.
      const auto& prompt = got[c].prompts[t];
      int64_t best = 0;
      for (int c2 = 0; c2 < 2; ++c2)
        for (int t2 = 0; t2 < (c2 <= c ? t + (c2 < c ? 1 : 0) : t); ++t2) {
          std::vector<int32_t> seq = got[c2].prompts[t2];
          seq.insert(seq.end(), got[c2].results[t2].tokens.begin(), got[c2].results[t2].tokens.end() - 1);
          best = std::max(best, Lcp(prompt, seq));
        }
      int64_t reusable = std::min<int64_t>(best, static_cast<int64_t>(prompt.size()) - 1) / page * page;
      EXPECT_EQ(g.cache.cached_tokens, reusable);
      EXPECT_EQ(g.cache.cached_tokens, g.cache[kDeviceTier] + g.cache[kHostTier] + g.cache[kDiskTier]);
      EXPECT_EQ(w.cache.cached_tokens, 0);
    }
  }
  fs::remove_all(disk);
}

TEST(KvMultiTurn, TieredCacheGivesIdenticalOutputsAndExactReuse) { CheckTieredCacheReuse(AttentionMode::kLlamaF16); }

// The same with --attn fast: its tiles are fixed by key position, so a cache
// hit reproduces recomputation just as well.
TEST(KvMultiTurn, TieredCacheGivesIdenticalOutputsWithFastAttention) {
  CheckTieredCacheReuse(AttentionMode::kTiledF32);
}

TEST(KvMultiTurn, SecondProcessGetsDiskHits) {
  const std::string& model = TinyModel();
  ASSERT_FALSE(model.empty());
  fs::path disk = fs::temp_directory_path() / ("pg_kv_restart_" + std::to_string(::getpid()));
  fs::remove_all(disk);
  const std::string prompt =
      "An agent returns to the same long context after every tool call, so the context should stay cached "
      "across memory tiers instead of being recomputed each time it comes back.";
  const std::string args = "generate -m " + model + " -p '" + prompt + "' -n 4 --temp 0 --kv-disk-dir " +
                           disk.string() + " --kv-disk-size 64MiB --cache-report --threads 2";
  auto first = test::RunProsgrow(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = test::RunProsgrow(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.out, second.out);
  // "reused N (device D, host H, disk K)": the second process reuses from disk.
  auto disk_tokens = [](const std::string& err) {
    auto line = err.find("cache: prompt");
    auto p = line == std::string::npos ? line : err.find("disk ", line);
    return p == std::string::npos ? -1 : std::atoll(err.c_str() + p + 5);
  };
  EXPECT_EQ(disk_tokens(first.err), 0) << first.err;
  EXPECT_GT(disk_tokens(second.err), 0) << second.err;
  fs::remove_all(disk);
}

// Issue-3 faults seen from the outside: a second process whose disk blocks were
// corrupted or truncated in between still prints exactly the same text, and the
// report counts the bad files (each a miss, then deleted).
TEST(KvMultiTurn, CorruptAndTruncatedDiskBlocksAreMissesNotWrongOutput) {
  const std::string& model = TinyModel();
  ASSERT_FALSE(model.empty());
  fs::path disk = fs::temp_directory_path() / ("pg_kv_fault_" + std::to_string(::getpid()));
  fs::remove_all(disk);
  std::string prompt;
  for (int i = 0; i < 12; ++i)
    prompt += "The returning agent finds its context on disk, block " + std::to_string(i) + ". ";
  const std::string args = "generate -m " + model + " -p '" + prompt + "' -n 6 --temp 0 --kv-disk-dir " +
                           disk.string() + " --kv-disk-size 64MiB --cache-report --threads 2";
  auto first = test::RunProsgrow(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(disk))
    if (e.is_regular_file() && e.path().extension() == ".kvb") files.push_back(e.path());
  ASSERT_GE(files.size(), 4u);
  std::sort(files.begin(), files.end());
  {  // corrupt one block: flip bytes in the middle
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(files[0]) / 2));
    const char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    f.write(junk, sizeof junk);
  }
  fs::resize_file(files[1], fs::file_size(files[1]) / 3);  // truncate another
  auto second = test::RunProsgrow(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.out, second.out);
  // "errors N" on the disk line of the report.
  auto disk_line = second.err.find("  disk ");
  ASSERT_NE(disk_line, std::string::npos) << second.err;
  auto errors = second.err.find("errors ", disk_line);
  ASSERT_NE(errors, std::string::npos);
  EXPECT_GE(std::atoll(second.err.c_str() + errors + 7), 1) << second.err;
  fs::remove_all(disk);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Issue-4 scenario: two agent sessions alternate and the device tier holds
// only one of them. Baseline recomputes every returning turn; optimized finds
// the other session's context on the host tier. Outputs are identical.
TEST(PolicyScenario, AlternatingSessionsBaselineRecomputesOptimizedReusesHost) {
  const std::string& model = TinyModel();
  ASSERT_FALSE(model.empty());
  auto run = [&](ServePolicy policy, std::vector<test::TurnResult>* out) {
    EngineConfig cfg;
    cfg.model_path = model;
    cfg.threads = 2;
    cfg.policy = policy;
    cfg.min_promote_tokens = 0;
    auto probe = Engine::Create(cfg);
    ASSERT_TRUE(probe.ok());
    const auto& mc = (*probe)->model().config();
    const size_t block = KvPages::BlockBytes(mc.n_layer, mc.kv_dim(), cfg.page_tokens);
    const int32_t vocab = static_cast<int32_t>(mc.n_vocab);
    probe->reset();
    cfg.kv_device_bytes = block * 14;  // one session's context (~180 tokens) and a little
    if (policy == ServePolicy::kOptimized) cfg.kv_host_bytes = block * 64;
    auto e = Engine::Create(cfg);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    std::mt19937 rng(5);
    std::vector<std::vector<int32_t>> ctx(2);
    for (int c = 0; c < 2; ++c) ctx[c] = test::Message(rng, 120, vocab);  // distinct system prompts
    for (int turn = 0; turn < 3; ++turn)
      for (int c = 0; c < 2; ++c) {
        std::vector<int32_t> msg = test::Message(rng, 12, vocab);
        ctx[c].insert(ctx[c].end(), msg.begin(), msg.end());
        test::TurnResult r = test::RunTurn(**e, ctx[c], 8, c ? "session-b" : "session-a");
        ctx[c].insert(ctx[c].end(), r.tokens.begin(), r.tokens.end());
        out->push_back(r);
      }
  };
  std::vector<test::TurnResult> base, opt;
  run(ServePolicy::kBaseline, &base);
  run(ServePolicy::kOptimized, &opt);
  ASSERT_EQ(base.size(), opt.size());
  for (size_t i = 0; i < base.size(); ++i) {
    SCOPED_TRACE("turn " + std::to_string(i));
    EXPECT_EQ(base[i].tokens, opt[i].tokens);
    EXPECT_EQ(base[i].cache[kHostTier] + base[i].cache[kDiskTier], 0);
    if (i >= 2) {  // a returning session
      EXPECT_EQ(base[i].cache.cached_tokens, 0) << "baseline should have lost the other session's context";
      // Everything the session computed before (120 + 12 prompt, 8 generated,
      // less the last token, whole pages) comes back, partly from the host tier.
      EXPECT_GE(opt[i].cache.cached_tokens, 128) << "optimized should find the whole context";
      EXPECT_GT(opt[i].cache[kHostTier], 0) << "optimized should find it on the host tier";
    }
  }
}

}  // namespace
}  // namespace pg
