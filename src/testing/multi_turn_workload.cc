#include "testing/multi_turn_workload.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/kv_pages.h"

namespace pg::test {

TurnResult RunTurn(Engine& e, const std::vector<int32_t>& prompt, int max_tokens, const std::string& session) {
  static int id = 0;
  GenerationRequest r;
  r.id = "t" + std::to_string(id++);
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = max_tokens;
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

std::vector<int32_t> Message(std::mt19937& rng, int n, int32_t vocab) {
  std::uniform_int_distribution<int32_t> d(300, std::min<int32_t>(vocab - 1, 3000));
  std::vector<int32_t> m(static_cast<size_t>(n));
  for (auto& t : m) t = d(rng);
  return m;
}

std::vector<Conversation> RunConversations(Engine& e, const MultiTurnWorkload& w, int32_t vocab) {
  std::mt19937 rng(w.seed);
  std::vector<Conversation> conv(2);
  const std::vector<int32_t> system = Message(rng, 40, vocab);
  for (int t = 0; t < w.turns; ++t)
    for (int c = 0; c < 2; ++c) {
      std::vector<int32_t> p = t == 0 ? system : conv[c].prompts.back();
      if (t > 0) p.insert(p.end(), conv[c].results.back().tokens.begin(), conv[c].results.back().tokens.end());
      const std::vector<int32_t> msg = Message(rng, 20 + 7 * t + c, vocab);
      p.insert(p.end(), msg.begin(), msg.end());
      conv[c].prompts.push_back(p);
      conv[c].results.push_back(RunTurn(e, p, w.max_tokens, c ? "conv-b" : "conv-a"));
    }
  return conv;
}

EngineConfig ReferenceConfig(const std::string& model_path) {
  EngineConfig c;
  c.model_path = model_path;
  c.threads = 2;
  c.policy = ServePolicy::kOptimized;
  c.prefix_cache = false;
  c.kv_device_bytes = 8ull << 20;
  return c;
}

EngineConfig TieredConfig(const EngineConfig& reference, const ModelConfig& mc, int64_t device_blocks,
                          int64_t host_blocks, const std::string& disk_dir) {
  EngineConfig c = reference;
  c.prefix_cache = true;
  c.min_promote_tokens = 0;
  const size_t block = mc.KvLayoutFor(c.page_tokens, KvDtype::kF16).block_bytes();
  c.kv_device_bytes = block * static_cast<size_t>(device_blocks);
  c.kv_host_bytes = block * static_cast<size_t>(host_blocks);
  c.kv_disk_dir = disk_dir;
  c.kv_disk_bytes = 64ull << 20;
  return c;
}

void ExpectSameTurn(const TurnResult& want, const TurnResult& got) {
  ASSERT_EQ(got.tokens, want.tokens);
  for (size_t i = 0; i < want.logprobs.size(); ++i) EXPECT_NEAR(got.logprobs[i], want.logprobs[i], 1e-4);
}

void ExpectSameOutputsThroughTheTiers(const std::vector<Conversation>& want, const std::vector<Conversation>& got,
                                      const CacheCounters& k) {
  ASSERT_EQ(got.size(), want.size());
  int64_t reused = 0, host_or_disk = 0;
  for (size_t c = 0; c < want.size(); ++c) {
    ASSERT_EQ(got[c].results.size(), want[c].results.size());
    for (size_t t = 0; t < want[c].results.size(); ++t) {
      SCOPED_TRACE("conversation " + std::to_string(c) + " turn " + std::to_string(t));
      const CacheUsage& u = got[c].results[t].cache;
      ASSERT_NO_FATAL_FAILURE(ExpectSameTurn(want[c].results[t], got[c].results[t]));
      reused += u.cached_tokens;
      host_or_disk += u[kHostTier] + u[kDiskTier];
    }
  }
  EXPECT_GT(reused, 0);
  EXPECT_GT(host_or_disk, 0) << "the device tier was meant to be too small";
  EXPECT_GT(k.tiers[kDeviceTier].evictions, 0);
  EXPECT_GT(k.tiers[kHostTier].promotions + k.tiers[kDiskTier].promotions, 0);
}

}  // namespace pg::test
