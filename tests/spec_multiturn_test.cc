// Issue 15: speculative decoding over two interleaved multi-turn
// conversations whose KV crosses the tiers (device too small for both, so
// earlier turns go to host and disk and come back). Every turn's greedy output
// with speculation must equal the run without it, and reuse still happens:
// the blocks the verified tokens filled were published and found again.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

struct Turn {
  std::vector<int32_t> tokens;
  FinishEvent finish;
};

Turn RunTurn(Engine& e, const std::vector<int32_t>& prompt, int n, const std::string& session) {
  GenerationRequest r;
  static int id = 0;
  r.id = "mt" + std::to_string(id++);
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = n;
  r.sampling.ignore_eos = true;
  r.session_id = session;
  Turn out;
  EXPECT_TRUE(e.Submit(r, [&](const ServiceEvent& ev) {
                 if (ev.kind == ServiceEvent::Kind::kToken)
                   out.tokens.push_back(ev.token.token);
                 else
                   out.finish = ev.finish;
               }).ok());
  e.RunUntilIdle();
  // Let the background demotions finish (and write every block to disk), so
  // which tier holds what at the next turn does not depend on thread timing.
  EXPECT_TRUE(e.FlushCache().ok());
  return out;
}

// 2 conversations x turns, interleaved; each user message quotes part of the
// previous answer (so the drafters have something to find).
std::vector<std::vector<Turn>> Converse(Engine& e, int turns, int32_t vocab) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> d(300, std::min<int32_t>(vocab - 1, 3000));
  std::vector<std::vector<int32_t>> ctx(2);
  for (int i = 0; i < 40; ++i) ctx[0].push_back(d(rng));
  ctx[1] = ctx[0];
  std::vector<std::vector<Turn>> out(2);
  for (int t = 0; t < turns; ++t)
    for (int c = 0; c < 2; ++c) {
      for (int i = 0; i < 15 + 5 * t; ++i) ctx[c].push_back(d(rng));
      if (t > 0) {
        const auto& prev = out[c].back().tokens;
        ctx[c].insert(ctx[c].end(), prev.begin(), prev.begin() + static_cast<long>(prev.size() / 2));
      }
      out[c].push_back(RunTurn(e, ctx[c], 24, c ? "b" : "a"));
      ctx[c].insert(ctx[c].end(), out[c].back().tokens.begin(), out[c].back().tokens.end());
    }
  return out;
}

TEST(SpecMultiTurn, TieredCacheWithSpeculationGivesIdenticalOutputs) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty());
  EngineConfig plain;
  plain.model_path = model;
  plain.threads = 2;
  plain.prefix_cache = false;
  plain.kv_device_bytes = 16ull << 20;
  auto ref = Engine::Create(plain);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*ref)->info().n_vocab);
  const int turns = 4;
  const auto want = Converse(**ref, turns, vocab);

  // The draft model: the target itself (every draft accepted, so the draft's
  // KV runs ahead and is rolled back only at the step's end) and another
  // seed's model (drafts mostly rejected) after the suffix cache in the chain.
  struct Case {
    const char* drafters;
    std::string draft_model;
  };
  const Case cases[] = {{"ngram", ""}, {"suffix", ""}, {"draft", model}, {"suffix,draft", test::TinyQwen2Model(5)}};
  for (const Case& cs : cases) {
    const char* drafters = cs.drafters;
    SCOPED_TRACE(drafters);
    const fs::path disk = fs::temp_directory_path() / ("pg_spec_mt_" + std::to_string(::getpid()) + drafters +
                                                       std::to_string(cs.draft_model.size()));
    fs::remove_all(disk);
    EngineConfig c = plain;
    c.prefix_cache = true;
    c.min_promote_tokens = 0;
    const size_t block =
        KvPages::BlockBytes((*ref)->model().config().n_layer, (*ref)->model().config().kv_dim(), c.page_tokens);
    c.kv_device_bytes = block * 24;
    c.kv_host_bytes = block * 10;
    c.kv_disk_dir = disk.string();
    c.kv_disk_bytes = 64ull << 20;
    c.spec.drafters = *ParseDrafterList(drafters);
    c.spec.draft_model = cs.draft_model;
    c.spec.policy = SpecPolicy::kAlways;  // every draft verified: these tests check verification
    // The draft model's KV takes its share of the device budget (the same
    // shape here: half); the target keeps its 24 blocks.
    if (!cs.draft_model.empty()) c.kv_device_bytes = block * 48;
    auto e = Engine::Create(c);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const auto got = Converse(**e, turns, vocab);
    int64_t drafted = 0, accepted = 0, slow_hits = 0;
    for (int conv = 0; conv < 2; ++conv)
      for (int t = 0; t < turns; ++t) {
        SCOPED_TRACE("conversation " + std::to_string(conv) + " turn " + std::to_string(t));
        ASSERT_EQ(got[conv][t].tokens, want[conv][t].tokens);
        drafted += got[conv][t].finish.spec.drafted;
        accepted += got[conv][t].finish.spec.accepted;
        slow_hits += got[conv][t].finish.cache[kHostTier] + got[conv][t].finish.cache[kDiskTier];
      }
    EXPECT_GT(drafted, 0);
    // Random weights rarely repeat their context, so the n-gram drafts are
    // mostly rejected (rollback); the suffix cache's are accepted too.
    if (std::string(drafters) != "ngram") {
      EXPECT_GT(accepted, 0);
    }
    if (cs.draft_model == model) {
      EXPECT_EQ(accepted, drafted) << "the model as its own draft";
    }
    EXPECT_GT(slow_hits, 0) << "the device tier was meant to be too small";
    EXPECT_TRUE((*e)->cache_counters().tiers[kDeviceTier].evictions > 0);
    fs::remove_all(disk);
  }
}

}  // namespace
}  // namespace pg
