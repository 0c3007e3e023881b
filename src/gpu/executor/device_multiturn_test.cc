// The tiered multi-turn run on the device executor: two interleaved
// conversations through the engine with --device cuda's configuration
// (UseDeviceExecutor: DeviceExecutor, the device tier a DeviceBlockArena in
// device memory) and a device tier too small for both, so earlier turns go
// to host and disk (through the arena's copy calls) and come back. Every
// turn's tokens and logprobs must equal the device run with the prefix cache
// off (the same arithmetic recomputing everything).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "gpu/executor/device_backend.h"
#include "gpu/gpu_test_util.h"
#include "testing/tiny_model.h"

namespace pg::gpu {
namespace {

namespace fs = std::filesystem;

struct Turn {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  CacheUsage cache;
};

Turn RunTurn(Engine& e, const std::vector<int32_t>& prompt, const std::string& session) {
  static int id = 0;
  GenerationRequest r;
  r.id = "d" + std::to_string(id++);
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = 6;
  r.sampling.ignore_eos = true;
  r.sampling.logprobs = true;
  r.session_id = session;
  Turn out;
  EXPECT_TRUE(e.Submit(r, [&](const ServiceEvent& ev) {
                 if (ev.kind == ServiceEvent::Kind::kToken) {
                   out.tokens.push_back(ev.token.token);
                   out.logprobs.push_back(ev.token.logprob);
                 } else {
                   out.cache = ev.finish.cache;
                 }
               }).ok());
  e.RunUntilIdle();
  return out;
}

// 2 conversations x 3 turns, interleaved A1 B1 A2 B2 A3 B3.
std::vector<Turn> RunConversations(Engine& e, int32_t vocab) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> tok(300, std::min<int32_t>(vocab - 1, 3000));
  auto message = [&](int n) {
    std::vector<int32_t> m(static_cast<size_t>(n));
    for (auto& t : m) t = tok(rng);
    return m;
  };
  const std::vector<int32_t> system = message(40);
  std::vector<std::vector<int32_t>> ctx = {system, system};
  std::vector<Turn> turns;
  for (int t = 0; t < 3; ++t)
    for (int c = 0; c < 2; ++c) {
      const std::vector<int32_t> m = message(20 + 7 * t + c);
      ctx[c].insert(ctx[c].end(), m.begin(), m.end());
      turns.push_back(RunTurn(e, ctx[c], c ? "conv-b" : "conv-a"));
      ctx[c].insert(ctx[c].end(), turns.back().tokens.begin(), turns.back().tokens.end());
    }
  return turns;
}

TEST(DeviceMultiTurn, TieredCacheOnTheDeviceGivesIdenticalOutputs) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty()) << "make-model failed";
  const fs::path disk = fs::temp_directory_path() / ("pg_kv_device_" + std::to_string(::getpid()));
  fs::remove_all(disk);
  EngineConfig base;
  base.model_path = model;
  base.threads = 2;
  base.policy = ServePolicy::kOptimized;
  base.prefix_cache = false;
  base.kv_device_bytes = 8ull << 20;
  ASSERT_TRUE(UseDeviceExecutor(0, &base).ok());
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  const std::vector<Turn> want = RunConversations(**plain, vocab);

  EngineConfig tiered = base;
  tiered.prefix_cache = true;
  tiered.min_promote_tokens = 0;
  const ModelConfig& mc = (*plain)->model().config();
  const size_t block = KvPages::BlockBytes(mc.n_layer, mc.kv_dim(), tiered.page_tokens);
  tiered.kv_device_bytes = block * 12;  // one conversation and a little: the other must leave
  tiered.kv_host_bytes = block * 6;
  tiered.kv_disk_dir = disk.string();
  tiered.kv_disk_bytes = 64ull << 20;
  auto cached = Engine::Create(tiered);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  const std::vector<Turn> got = RunConversations(**cached, vocab);

  ASSERT_EQ(got.size(), want.size());
  int64_t reused = 0, host_or_disk = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("turn " + std::to_string(i));
    ASSERT_EQ(got[i].tokens, want[i].tokens);
    for (size_t k = 0; k < want[i].logprobs.size(); ++k) EXPECT_NEAR(got[i].logprobs[k], want[i].logprobs[k], 1e-4);
    reused += got[i].cache.cached_tokens;
    host_or_disk += got[i].cache.host_tokens + got[i].cache.disk_tokens;
  }
  EXPECT_GT(reused, 0);
  EXPECT_GT(host_or_disk, 0) << "the device tier was meant to be too small";
  const CacheCounters k = (*cached)->cache_counters();
  EXPECT_GT(k.device.evictions, 0);
  EXPECT_GT(k.host.promotions + k.disk.promotions, 0);
  cached->reset();
  fs::remove_all(disk);
}

}  // namespace
}  // namespace pg::gpu
