// Issue 14 at the engine level: the scheduler classifies each request's
// uncached prompt tokens once (at its first admission, whatever the
// cache-aware window or a retry for room does), the reasons sum to
// prompt - cached on every FinishEvent, and the cache's totals equal the
// sums over the requests.
#include <gtest/gtest.h>

#include <map>

#include "engine/engine.h"
#include "model/kv_pages.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

const std::string& TinyModel() {
  static const std::string path = test::TinyQwen2Model(5);
  return path;
}

std::vector<int32_t> Tokens(int seed, int n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = 300 + (seed * 7919 + i * 131) % 2700;
  return t;
}

int64_t Sum(const MissReasons& m) { return m.never_seen + m.evicted + m.diverged + m.loading + m.policy; }

TEST(EngineMissReasonsTest, ClassifiedOncePerRequestAndSummed) {
  ASSERT_FALSE(TinyModel().empty());
  EngineConfig c;
  c.model_path = TinyModel();
  c.threads = 2;
  c.policy = ServePolicy::kOptimized;  // cache-aware window of 8
  c.eviction = "lru";
  c.min_promote_tokens = 0;
  auto probe = Engine::Create(c);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  const size_t block =
      KvPages::BlockBytes((*probe)->model().config().n_layer, (*probe)->model().config().kv_dim(), c.page_tokens);
  probe->reset();
  c.kv_device_bytes = block * 24;
  c.kv_host_bytes = block * 16;
  auto made = Engine::Create(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Engine& e = **made;

  std::map<std::string, FinishEvent> done;
  int64_t prompt_total = 0;
  auto submit = [&](const std::string& id, const std::vector<int32_t>& prompt) {
    GenerationRequest r;
    r.id = id;
    r.prompt = prompt;
    r.sampling.temperature = 0;
    r.sampling.max_tokens = 2;
    r.sampling.ignore_eos = true;
    prompt_total += int64_t(prompt.size());
    ASSERT_TRUE(e.Submit(r, [&done, id](const ServiceEvent& ev) {
                   if (ev.kind == ServiceEvent::Kind::kFinish) done[id] = ev.finish;
                 }).ok());
  };
  // Round 1: 12 conversations at once (more than the window and than the
  // device tier holds), round 2: each again with a new turn appended.
  for (int i = 0; i < 12; ++i) submit("a" + std::to_string(i), Tokens(i, 100));
  e.RunUntilIdle();
  for (int i = 0; i < 12; ++i) {
    std::vector<int32_t> p = Tokens(i, 100), more = Tokens(50 + i, 20);
    p.insert(p.end(), more.begin(), more.end());
    submit("b" + std::to_string(i), p);
  }
  e.RunUntilIdle();
  ASSERT_EQ(done.size(), 24u);
  int64_t sums[5] = {0, 0, 0, 0, 0}, cached = 0;
  for (const auto& [id, f] : done) {
    EXPECT_EQ(Sum(f.cache.miss), f.prompt_tokens - f.cache.cached_tokens) << id;
    EXPECT_EQ(f.cache.miss.evicted, f.cache.miss.evicted_by_tier.total()) << id;
    if (id[0] == 'a') {
      EXPECT_EQ(f.cache.miss.never_seen, 100) << id;  // nothing was there before
    }
    sums[0] += f.cache.miss.never_seen;
    sums[1] += f.cache.miss.evicted;
    sums[2] += f.cache.miss.diverged;
    sums[3] += f.cache.miss.loading;
    sums[4] += f.cache.miss.policy;
    cached += f.cache.cached_tokens;
  }
  EXPECT_GT(sums[1], 0);  // 40 blocks of cache for 12 x 7 blocks: some were evicted
  EXPECT_GT(cached, 0);
  const CacheCounters kv = e.cache_counters();
  EXPECT_EQ(kv.miss.prompt_tokens, prompt_total);  // each request classified exactly once
  EXPECT_EQ(kv.miss.cached_tokens, cached);
  EXPECT_EQ(kv.miss.never_seen, sums[0]);
  EXPECT_EQ(kv.miss.evicted[0] + kv.miss.evicted[1] + kv.miss.evicted[2], sums[1]);
  EXPECT_EQ(kv.miss.diverged, sums[2]);
  EXPECT_EQ(kv.miss.loading, sums[3]);
  EXPECT_EQ(kv.miss.policy, sums[4]);
  EXPECT_GE(kv.whatif.at(0).hit_tokens, cached);
}

}  // namespace
}  // namespace pg
