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

#include "engine/engine.h"
#include "kv/media/block_arena.h"
#include "testing/guarded_block_arena.h"
#include "testing/multi_turn_workload.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_DEATH(
      {
        volatile uint8_t v = a.BlockPtr(1)[0];
        (void)v;
      },
      "");                                      // closed: a read faults
  EXPECT_DEATH({ a.BlockPtr(0)[5] = 1; }, "");  // and so does a write
}

TEST(KvGuardedDevice, TieredMultiTurnGivesIdenticalOutputsWithNoFault) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty()) << "make-model failed";
  const fs::path disk = fs::temp_directory_path() / ("pg_kv_guarded_" + std::to_string(::getpid()));
  fs::remove_all(disk);

  const EngineConfig base = test::ReferenceConfig(model);
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  const test::MultiTurnWorkload workload;  // 5 turns, seed 11, 12 tokens: kv_multiturn_test.cc's
  const std::vector<test::Conversation> want = test::RunConversations(**plain, workload, vocab);

  // One conversation and a little on the device tier: the other must leave.
  EngineConfig tiered = test::TieredConfig(base, (*plain)->model().config(), 18, 10, disk.string());
  test::GuardedBlockArena* arena = nullptr;
  tiered.backend = test::GuardedBlockArena::CpuBackend(&arena);
  auto guarded = Engine::Create(tiered);
  ASSERT_TRUE(guarded.ok()) << guarded.status().ToString();
  ASSERT_NE(arena, nullptr);
  const std::vector<test::Conversation> got = test::RunConversations(**guarded, workload, vocab);
  test::ExpectSameOutputsThroughTheTiers(want, got, (*guarded)->cache_counters());
  EXPECT_GT(arena->copies(), 0);      // the moves went through the arena's copy calls
  EXPECT_EQ(arena->open_slots(), 0);  // every finished sequence closed its slots
  guarded->reset();
  fs::remove_all(disk);
}

}  // namespace
}  // namespace pg
