// Forward-pass batch invariance, per attention mode: the logits of a prompt
// must be bit-identical whether it is prefilled in one chunk or several,
// alongside another sequence in the same step or alone, and with any thread
// count. The prefix cache relies on it: a cache hit (earlier chunks' K/V
// reused) must reproduce exactly what recomputation gives.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "model/model.h"
#include "model/test_kv_arena.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// Logits after prefilling `prompt` in the given chunk sizes; when `other` is
// non-empty it is prefilled in the same Forward calls as a second sequence.
std::vector<float> Prefill(const Model& m, const std::vector<int32_t>& prompt, const std::vector<int64_t>& chunks,
                           const std::vector<int32_t>& other, int threads) {
  const ModelConfig& c = m.config();
  // One arena: the prompt's blocks first, then the other sequence's.
  const int64_t nb1 = static_cast<int64_t>(prompt.size()) / 16 + 1, nb2 = static_cast<int64_t>(other.size()) / 16 + 1;
  TestKvArena arena(c, 16, (nb1 + nb2) * 16);
  const int32_t* table2 = arena.table() + nb1;
  ThreadPool pool(threads);
  ForwardScratch scratch;
  std::vector<float> logits(static_cast<size_t>(2 * c.n_vocab));
  int64_t pos = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const bool last = i + 1 == chunks.size();
    std::vector<BatchSeq> batch;
    if (i == 0 && !other.empty())
      batch.push_back({other.data(), static_cast<int64_t>(other.size()), 0, table2, nb2, false});
    batch.push_back({prompt.data() + pos, chunks[i], pos, arena.table(), nb1, last});
    EXPECT_TRUE(m.Forward(batch, arena.pages(), pool, scratch, last ? logits.data() : nullptr).ok());
    pos += chunks[i];
  }
  logits.resize(static_cast<size_t>(c.n_vocab));
  return logits;
}

class ForwardInvariance : public ::testing::TestWithParam<AttentionMode> {};

TEST_P(ForwardInvariance, LogitsDoNotDependOnChunkingBatchOrThreads) {
  fs::path path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models/tiny-qwen3-spm.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "fixtures absent";
  auto model = Model::Load(path.string(), ModelOptionsFor(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Model& m = **model;
  std::vector<int32_t> prompt, other;
  for (int i = 0; i < 150; ++i) prompt.push_back(static_cast<int32_t>((i * 37 + 11) % m.config().n_vocab));
  for (int i = 0; i < 40; ++i) other.push_back(static_cast<int32_t>((i * 53 + 5) % m.config().n_vocab));
  const std::vector<float> one = Prefill(m, prompt, {150}, {}, 2);
  const size_t bytes = one.size() * sizeof(float);
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {37, 40, 1, 72}, {}, 2).data(), bytes)) << "chunked";
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {149, 1}, {}, 3).data(), bytes)) << "decode step";
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {150}, {}, 1).data(), bytes)) << "one thread";
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {64, 86}, {}, 5).data(), bytes)) << "five threads";
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {150}, other, 2).data(), bytes)) << "beside another";
  EXPECT_EQ(0, std::memcmp(one.data(), Prefill(m, prompt, {20, 130}, other, 4).data(), bytes)) << "beside, chunked";
}

INSTANTIATE_TEST_SUITE_P(Modes, ForwardInvariance,
                         ::testing::Values(AttentionMode::kLlamaF16, AttentionMode::kTiledF32),
                         [](const auto& info) {
                           return std::string(info.param == AttentionMode::kLlamaF16 ? "Llama" : "Fast");
                         });

}  // namespace
}  // namespace pg
