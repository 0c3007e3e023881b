// Forward-pass batch invariance, per attention mode: the logits of a prompt
// must be bit-identical whether it is prefilled in one chunk or several,
// alongside another sequence in the same step or alone, and with any thread
// count. The prefix cache relies on it: a cache hit (earlier chunks' K/V
// reused) must reproduce exactly what recomputation gives.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
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

// A dense model and the two MoE architectures (whose expert GEMMs group a
// batch's tokens by expert, so the grouping must not change a token's bits).
class ForwardInvariance : public ::testing::TestWithParam<std::tuple<const char*, AttentionMode>> {
 protected:
  // The parameter's fixture model in its attention mode; null when the
  // fixture is absent (a load failure is a test failure as well).
  std::unique_ptr<Model> LoadParamModel() {
    const fs::path path =
        fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (std::string(std::get<0>(GetParam())) + ".gguf");
    if (!fs::exists(path)) return nullptr;
    auto model = Model::Load(path.string(), ModelOptionsFor(std::get<1>(GetParam())));
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(*model) : nullptr;
  }
};

TEST_P(ForwardInvariance, LogitsDoNotDependOnChunkingBatchOrThreads) {
  std::unique_ptr<Model> model = LoadParamModel();
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const Model& m = *model;
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

// MoE: a prompt prefilled in one batch (every expert's tokens in one GEMM)
// against the same prompt run one token at a time (a GEMV per chosen
// expert): the last logits must be the same bits.
TEST_P(ForwardInvariance, PrefillEqualsTokenByTokenDecode) {
  std::unique_ptr<Model> model = LoadParamModel();
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const Model& m = *model;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(static_cast<int32_t>((i * 101 + 7) % m.config().n_vocab));
  const std::vector<float> batched = Prefill(m, prompt, {40}, {}, 2);
  const std::vector<float> decoded = Prefill(m, prompt, std::vector<int64_t>(40, 1), {}, 2);
  EXPECT_EQ(0, std::memcmp(batched.data(), decoded.data(), batched.size() * sizeof(float)));
}

// MLA (deepseek2, glm-dsa): the cache itself. The same token at the same
// position writes the same bytes (latent rows and indexer keys) whichever
// step computed it: one prefill, chunks, or one token at a time.
std::vector<uint8_t> CacheAfter(const Model& m, const std::vector<int32_t>& prompt,
                                const std::vector<int64_t>& chunks) {
  TestKvArena arena(m.config(), 16, static_cast<int64_t>(prompt.size()), m.kv_dtype());
  ThreadPool pool(2);
  ForwardScratch scratch;
  int64_t pos = 0;
  for (int64_t n : chunks) {
    BatchSeq b{prompt.data() + pos, n, pos, arena.table(), arena.n_blocks(), false};
    EXPECT_TRUE(m.Forward({&b, 1}, arena.pages(), pool, scratch, nullptr).ok());
    pos += n;
  }
  return arena.bytes();
}

class MlaCache : public ForwardInvariance {};

TEST_P(MlaCache, SameTokenSamePositionWritesTheSameBytes) {
  std::unique_ptr<Model> model = LoadParamModel();
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  std::vector<int32_t> prompt;
  for (int i = 0; i < 80; ++i) prompt.push_back(static_cast<int32_t>((i * 37 + 11) % model->config().n_vocab));
  const std::vector<uint8_t> one = CacheAfter(*model, prompt, {80});
  EXPECT_EQ(one, CacheAfter(*model, prompt, {17, 40, 1, 22})) << "chunked";
  EXPECT_EQ(one, CacheAfter(*model, prompt, std::vector<int64_t>(80, 1))) << "token by token";
}

// glm-dsa: the indexer keys in the block are what the sparse attention
// reads past top-k. A block whose indexer keys are lost (zeroed) decodes
// differently, so a cache tier that dropped them could not go unnoticed.
class DsaCache : public ForwardInvariance {};

TEST_P(DsaCache, LosingTheIndexerKeysOfABlockChangesTheNextToken) {
  std::unique_ptr<Model> model = LoadParamModel();
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const Model& m = *model;
  ASSERT_TRUE(m.config().mla.sparse()) << "a model with an indexer";
  std::vector<int32_t> prompt;
  for (int i = 0; i < 64; ++i) prompt.push_back(static_cast<int32_t>((i * 53 + 5) % m.config().n_vocab));
  TestKvArena arena(m.config(), 16, 64, m.kv_dtype());
  ThreadPool pool(2);
  ForwardScratch scratch;
  std::vector<float> intact(static_cast<size_t>(m.config().n_vocab)), lost(intact.size());
  BatchSeq pre{prompt.data(), 63, 0, arena.table(), arena.n_blocks(), false};
  ASSERT_TRUE(m.Forward({&pre, 1}, arena.pages(), pool, scratch, nullptr).ok());
  BatchSeq last{&prompt[63], 1, 63, arena.table(), arena.n_blocks(), true};
  ASSERT_TRUE(m.Forward({&last, 1}, arena.pages(), pool, scratch, intact.data()).ok());
  const KvLayout& l = arena.pages().layout;
  for (int64_t i = 0; i < l.n_index_layers; ++i)  // block 1: positions 16..31
    std::memset(arena.bytes().data() + arena.pages().block_bytes + l.index_offset(i), 0,
                l.page_tokens * l.index_row_bytes());
  ASSERT_TRUE(m.Forward({&last, 1}, arena.pages(), pool, scratch, lost.data()).ok());
  EXPECT_NE(0, std::memcmp(intact.data(), lost.data(), intact.size() * sizeof(float)));
}

std::string InvarianceName(const ::testing::TestParamInfo<std::tuple<const char*, AttentionMode>>& info) {
  std::string s = std::get<0>(info.param);
  std::erase(s, '-');
  std::erase(s, '_');
  const AttentionMode mode = std::get<1>(info.param);
  return s + (mode == AttentionMode::kLlamaF16 ? "Llama" : mode == AttentionMode::kPrecise ? "Precise" : "Fast");
}

INSTANTIATE_TEST_SUITE_P(
    Models, ForwardInvariance,
    ::testing::Combine(::testing::Values("tiny-qwen3-spm", "tiny-qwen3moe-gpt2", "tiny-glm4moe-spm",
                                         "tiny-deepseek2-gpt2", "tiny-glm-dsa-spm"),
                       ::testing::Values(AttentionMode::kLlamaF16, AttentionMode::kTiledF32, AttentionMode::kPrecise)),
    InvarianceName);

INSTANTIATE_TEST_SUITE_P(Mla, MlaCache,
                         ::testing::Combine(::testing::Values("tiny-deepseek2-gpt2", "tiny-glm-dsa-spm"),
                                            ::testing::Values(AttentionMode::kTiledF32, AttentionMode::kPrecise)),
                         InvarianceName);

INSTANTIATE_TEST_SUITE_P(Dsa, DsaCache,
                         ::testing::Combine(::testing::Values("tiny-glm-dsa-spm"),
                                            ::testing::Values(AttentionMode::kTiledF32, AttentionMode::kPrecise)),
                         InvarianceName);

// The precise products on K-quant weights (a Q4_K / Q6_K mix): their chunks
// are whole super-blocks, and the bits must not depend on the batch either.
INSTANTIATE_TEST_SUITE_P(Quantized, ForwardInvariance,
                         ::testing::Combine(::testing::Values("small-llama-spm-q4_k_m"),
                                            ::testing::Values(AttentionMode::kPrecise)),
                         InvarianceName);

}  // namespace
}  // namespace pg
