// Issue 21, the forward seam: the tiered multi-turn workload of
// kv_multiturn_test.cc over a device tier whose memory the host may not touch
// outside the arena's own calls (testing/guarded_block_arena.h: pages
// PROT_NONE except inside CopyIn / CopyOut, and for the slots of settled
// sequences' block tables, which the forward pass reads and writes). Every
// move between tiers (device <-> host, device <-> disk) must go through the
// media's copy calls, or the process faults. Outputs must equal the run with
// the prefix cache off on an ordinary arena.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "kv/media/block_arena.h"
#include "testing/guarded_block_arena.h"
#include "testing/tiny_model.h"

namespace pg {
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
  r.id = "g" + std::to_string(id++);
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = 12;
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

// Two conversations x 5 turns, interleaved, each turn the previous prompt +
// answer + a new seeded message (the shape of kv_multiturn_test.cc).
std::vector<Turn> RunConversations(Engine& e, int32_t vocab) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> d(300, std::min<int32_t>(vocab - 1, 3000));
  auto message = [&](int n) {
    std::vector<int32_t> m(static_cast<size_t>(n));
    for (auto& t : m) t = d(rng);
    return m;
  };
  std::vector<int32_t> system = message(40);
  std::vector<std::vector<int32_t>> ctx = {system, system};
  std::vector<Turn> out;
  for (int t = 0; t < 5; ++t)
    for (int c = 0; c < 2; ++c) {
      std::vector<int32_t> msg = message(20 + 7 * t + c);
      ctx[c].insert(ctx[c].end(), msg.begin(), msg.end());
      out.push_back(RunTurn(e, ctx[c], c ? "conv-b" : "conv-a"));
      ctx[c].insert(ctx[c].end(), out.back().tokens.begin(), out.back().tokens.end());
    }
  return out;
}

TEST(KvGuardedDevice, StrayAccessFaultsCopiesAndOpenSlotsDoNot) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto made = test::GuardedBlockArena::Create(2, 100);
  ASSERT_TRUE(made.ok());
  test::GuardedBlockArena& a = **made;
  std::vector<uint8_t> in(100, 7), out(100, 0);
  a.CopyIn(1, in.data());
  a.CopyOut(1, out.data());
  EXPECT_EQ(out, in);
  a.OpenForKernels(1);
  EXPECT_EQ(a.BlockPtr(1)[99], 7);  // open: the forward pass may read it
  a.CloseForKernels(1);
  EXPECT_EQ(a.open_slots(), 0);
  EXPECT_DEATH({ volatile uint8_t v = a.BlockPtr(1)[0]; (void)v; }, "");  // closed: a read faults
  EXPECT_DEATH({ a.BlockPtr(0)[5] = 1; }, "");                           // and so does a write
}

TEST(KvGuardedDevice, TieredMultiTurnGivesIdenticalOutputsWithNoFault) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty()) << "make-model failed";
  const fs::path disk = fs::temp_directory_path() / ("pg_kv_guarded_" + std::to_string(::getpid()));
  fs::remove_all(disk);

  EngineConfig base;
  base.model_path = model;
  base.threads = 2;
  base.policy = ServePolicy::kOptimized;
  base.prefix_cache = false;
  base.kv_device_bytes = 8ull << 20;
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  const std::vector<Turn> want = RunConversations(**plain, vocab);

  EngineConfig tiered = base;
  tiered.prefix_cache = true;
  tiered.min_promote_tokens = 0;
  const size_t block = KvPages::BlockBytes((*plain)->model().config().n_layer, (*plain)->model().config().kv_dim(),
                                           tiered.page_tokens);
  tiered.kv_device_bytes = block * 18;  // one conversation and a little: the other must leave
  tiered.kv_host_bytes = block * 10;
  tiered.kv_disk_dir = disk.string();
  tiered.kv_disk_bytes = 64ull << 20;
  test::GuardedBlockArena* arena = nullptr;
  tiered.kv_device_arena = test::GuardedBlockArena::Factory(&arena);
  auto guarded = Engine::Create(tiered);
  ASSERT_TRUE(guarded.ok()) << guarded.status().ToString();
  ASSERT_NE(arena, nullptr);
  const std::vector<Turn> got = RunConversations(**guarded, vocab);

  ASSERT_EQ(got.size(), want.size());
  int64_t cached = 0, host_or_disk = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("turn " + std::to_string(i));
    ASSERT_EQ(got[i].tokens, want[i].tokens);
    for (size_t k = 0; k < want[i].logprobs.size(); ++k) EXPECT_NEAR(got[i].logprobs[k], want[i].logprobs[k], 1e-4);
    cached += got[i].cache.cached_tokens;
    host_or_disk += got[i].cache.host_tokens + got[i].cache.disk_tokens;
  }
  EXPECT_GT(cached, 0);
  EXPECT_GT(host_or_disk, 0) << "the device tier was meant to be too small";
  const CacheCounters k = (*guarded)->cache_counters();
  EXPECT_GT(k.device.evictions, 0);
  EXPECT_GT(k.host.promotions + k.disk.promotions, 0);
  EXPECT_GT(arena->copies(), 0);         // the moves went through the arena's copy calls
  EXPECT_EQ(arena->open_slots(), 0);     // every finished sequence closed its slots
  guarded->reset();
  fs::remove_all(disk);
}

}  // namespace
}  // namespace pg
