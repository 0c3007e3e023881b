// The tiered multi-turn run on the device executor: two interleaved
// conversations through the engine with --device cuda's configuration
// (UseDeviceExecutor: DeviceExecutor, the device tier a DeviceBlockArena in
// device memory) and a device tier too small for both, so earlier turns go
// to host and disk (through the arena's copy calls) and come back. Every
// turn's tokens and logprobs must equal the device run with the prefix cache
// off (the same arithmetic recomputing everything). Also on the glm-dsa
// fixture (MLA with the DSA indexer, top-k 16: every prompt is past it), whose
// blocks carry the latent rows and the indexer keys through the tiers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "engine/engine.h"
#include "gpu/executor/device_backend.h"
#include "gpu/gpu_test_util.h"
#include "testing/multi_turn_workload.h"
#include "testing/tiny_model.h"

namespace pg::gpu {
namespace {

namespace fs = std::filesystem;

void ExpectTieredRunLikeThePlainOne(const std::string& model, int max_tokens, int64_t device_blocks) {
  const fs::path disk = fs::temp_directory_path() / ("pg_kv_device_" + std::to_string(::getpid()));
  fs::remove_all(disk);
  EngineConfig base = test::ReferenceConfig(model);
  ASSERT_TRUE(UseDeviceExecutor(DeviceOptions{}, &base).ok());
  auto plain = Engine::Create(base);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const int32_t vocab = static_cast<int32_t>((*plain)->info().n_vocab);
  test::MultiTurnWorkload workload;  // 2 conversations x 3 turns, interleaved A1 B1 A2 B2 A3 B3
  workload.turns = 3;
  workload.seed = 5;
  workload.max_tokens = max_tokens;
  const std::vector<test::Conversation> want = test::RunConversations(**plain, workload, vocab);

  // One conversation and a little on the device tier: the other must leave.
  const EngineConfig tiered = test::TieredConfig(base, (*plain)->model().config(), device_blocks, 6, disk.string());
  auto cached = Engine::Create(tiered);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  const std::vector<test::Conversation> got = test::RunConversations(**cached, workload, vocab);
  test::ExpectSameOutputsThroughTheTiers(want, got, (*cached)->cache_counters());
  cached->reset();
  fs::remove_all(disk);
}

TEST(DeviceMultiTurn, TieredCacheOnTheDeviceGivesIdenticalOutputs) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty()) << "make-model failed";
  ExpectTieredRunLikeThePlainOne(model, 6, 12);
}

TEST(DeviceMultiTurn, MlaWithTheIndexerThroughTheTiersGivesIdenticalOutputs) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const fs::path model = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models/tiny-glm-dsa-spm.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << "needs ../shared/fixtures/models/tiny-glm-dsa-spm.gguf (absent)";
  // 3-token answers (the emulator's 32k-vocab logits are slow), so 10 device blocks make it too small.
  ExpectTieredRunLikeThePlainOne(model.string(), 3, 10);
}

}  // namespace
}  // namespace pg::gpu
