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
#include "testing/tiny_model.h"
#include "test_util.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// A tiny synthetic model shared by the tests in this file (tiny_model.h).
const std::string& TinyModel() {
  static const std::string path = test::TinyQwen2Model(7);
  return path;
}

struct TurnResult {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  CacheUsage cache;
  std::string finish;
};

TurnResult RunTurn(Engine& e, const std::vector<int32_t>& prompt, int n, const std::string& session) {
  GenerationRequest r;
  static int id = 0;
  r.id = "t" + std::to_string(id++);
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = n;
  r.sampling.ignore_eos = true;
  r.sampling.logprobs = true;
  r.session_id = session;
  TurnResult out;
  EXPECT_TRUE(e.Submit(r, [&](const ServiceEvent& ev) {
                 if (ev.kind == ServiceEvent::Kind::kToken) {
                   out.tokens.push_back(ev.token.token);
                   out.logprobs.push_back(ev.token.logprob);
                 } else {
                   out.cache = ev.finish.cache;
                   out.finish = ev.finish.finish_reason;
                 }
               }).ok());
  e.RunUntilIdle();
  return out;
}

// Tokens of a "user message": seeded ids in the ordinary range of the vocab.
std::vector<int32_t> Message(std::mt19937& rng, int n, int32_t vocab) {
  std::uniform_int_distribution<int32_t> d(300, std::min<int32_t>(vocab - 1, 3000));
  std::vector<int32_t> m(static_cast<size_t>(n));
  for (auto& t : m) t = d(rng);
  return m;
}

int64_t Lcp(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

struct Conversation {
  std::vector<std::vector<int32_t>> prompts;  // per turn
  std::vector<TurnResult> results;
};

// Runs 2 conversations x `turns` turns, interleaved A1 B1 A2 B2 ...
std::vector<Conversation> RunConversations(Engine& e, int turns, uint32_t seed, int32_t vocab) {
  std::mt19937 rng(seed);
  std::vector<Conversation> conv(2);
  std::vector<int32_t> system = Message(rng, 40, vocab);
  for (int t = 0; t < turns; ++t)
    for (int c = 0; c < 2; ++c) {
      std::vector<int32_t> p = t == 0 ? system : conv[c].prompts.back();
      if (t > 0) p.insert(p.end(), conv[c].results.back().tokens.begin(), conv[c].results.back().tokens.end());
      std::vector<int32_t> msg = Message(rng, 20 + 7 * t + c, vocab);
      p.insert(p.end(), msg.begin(), msg.end());
      conv[c].prompts.push_back(p);
      conv[c].results.push_back(RunTurn(e, p, 12, c ? "conv-b" : "conv-a"));
    }
  return conv;
}

void CheckTieredCacheReuse(AttentionMode attention) {
  const std::string& model = TinyModel();
  ASSERT_FALSE(model.empty()) << "make-model failed";
  fs::path disk = fs::temp_directory_path() /
                  ("pg_kv_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(static_cast<int>(attention)));
  fs::remove_all(disk);

  EngineConfig base;
  base.model_path = model;
  base.attention = attention;
  base.threads = 2;
  base.policy = ServePolicy::kOptimized;
  base.prefix_cache = false;
  base.kv_device_bytes = 8ull << 20;
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  const int turns = 5;
  auto want = RunConversations(**plain, turns, 11, vocab);

  EngineConfig tiered = base;
  tiered.prefix_cache = true;
  tiered.min_promote_tokens = 0;
  const size_t block = KvPages::BlockBytes((*plain)->model().config().n_layer, (*plain)->model().config().kv_dim(),
                                           tiered.page_tokens);
  // Room for one conversation's longest prompt and a little: the other must leave.
  tiered.kv_device_bytes = block * 18;
  tiered.kv_host_bytes = block * 10;
  tiered.kv_disk_dir = disk.string();
  tiered.kv_disk_bytes = 64ull << 20;
  auto cached = Engine::Create(tiered);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  auto got = RunConversations(**cached, turns, 11, vocab);

  const int64_t page = tiered.page_tokens;
  int64_t host_or_disk = 0;
  for (int c = 0; c < 2; ++c) {
    std::vector<std::vector<int32_t>> computed;  // token sequences whose KV was computed before
    for (int t = 0; t < turns; ++t) {
      SCOPED_TRACE("conversation " + std::to_string(c) + " turn " + std::to_string(t));
      const auto& w = want[c].results[t];
      const auto& g = got[c].results[t];
      ASSERT_EQ(g.tokens, w.tokens);
      for (size_t i = 0; i < w.logprobs.size(); ++i) EXPECT_NEAR(g.logprobs[i], w.logprobs[i], 1e-4);
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
      EXPECT_EQ(g.cache.cached_tokens, g.cache.device_tokens + g.cache.host_tokens + g.cache.disk_tokens);
      host_or_disk += g.cache.host_tokens + g.cache.disk_tokens;
      EXPECT_EQ(w.cache.cached_tokens, 0);
    }
  }
  EXPECT_GT(host_or_disk, 0) << "the device tier was meant to be too small";
  CacheCounters k = (*cached)->cache_counters();
  EXPECT_GT(k.device.evictions, 0);
  EXPECT_GT(k.host.promotions + k.disk.promotions, 0);
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
  for (int i = 0; i < 12; ++i) prompt += "The returning agent finds its context on disk, block " + std::to_string(i) + ". ";
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
  auto run = [&](ServePolicy policy, std::vector<TurnResult>* out) {
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
    for (int c = 0; c < 2; ++c) ctx[c] = Message(rng, 120, vocab);  // distinct system prompts
    for (int turn = 0; turn < 3; ++turn)
      for (int c = 0; c < 2; ++c) {
        std::vector<int32_t> msg = Message(rng, 12, vocab);
        ctx[c].insert(ctx[c].end(), msg.begin(), msg.end());
        TurnResult r = RunTurn(**e, ctx[c], 8, c ? "session-b" : "session-a");
        ctx[c].insert(ctx[c].end(), r.tokens.begin(), r.tokens.end());
        out->push_back(r);
      }
  };
  std::vector<TurnResult> base, opt;
  run(ServePolicy::kBaseline, &base);
  run(ServePolicy::kOptimized, &opt);
  ASSERT_EQ(base.size(), opt.size());
  for (size_t i = 0; i < base.size(); ++i) {
    SCOPED_TRACE("turn " + std::to_string(i));
    EXPECT_EQ(base[i].tokens, opt[i].tokens);
    EXPECT_EQ(base[i].cache.host_tokens + base[i].cache.disk_tokens, 0);
    if (i >= 2) {  // a returning session
      EXPECT_EQ(base[i].cache.cached_tokens, 0) << "baseline should have lost the other session's context";
      // Everything the session computed before (120 + 12 prompt, 8 generated,
      // less the last token, whole pages) comes back, partly from the host tier.
      EXPECT_GE(opt[i].cache.cached_tokens, 128) << "optimized should find the whole context";
      EXPECT_GT(opt[i].cache.host_tokens, 0) << "optimized should find it on the host tier";
    }
  }
}

}  // namespace
}  // namespace pg
