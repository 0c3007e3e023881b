// The MLA archs' hyperparameters as llama.cpp reads them: the two fixtures
// (YaRN with DeepSeek's log multiplier and expert groups; the DSA indexer
// with a shared layer and a NextN block), deepseek2 without q LoRA, and
// one-line errors.
#include "model/mla_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/model_config.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

Result<ModelConfig> FixtureConfig(const std::string& name, std::unique_ptr<GgufFile>* keep) {
  const fs::path p = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (name + ".gguf");
  PG_ASSIGN_OR_RETURN(*keep, GgufFile::Open(p.string()));
  return ModelConfig::FromGguf(**keep);
}

bool HaveFixtures() { return fs::exists(fs::path(PROSGROW_SHARED_DIR) / "fixtures/models/tiny-glm-dsa-spm.gguf"); }

TEST(MlaConfig, DeepSeek2FixtureHasYarnWithTheLogMultiplierAndExpertGroups) {
  if (!HaveFixtures()) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  std::unique_ptr<GgufFile> f;
  auto c = FixtureConfig("tiny-deepseek2-gpt2", &f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const MlaConfig& m = c->mla;
  EXPECT_EQ(c->attention_kind(), AttentionKind::kMla);
  EXPECT_EQ(m.q_lora, 56);
  EXPECT_EQ(m.kv_lora, 48);
  EXPECT_EQ(m.nope, 24);
  EXPECT_EQ(m.rope, 16);
  EXPECT_EQ(m.v_head, 32);
  EXPECT_EQ(c->head_dim, 64);  // the cached row: kv_lora + rope
  EXPECT_EQ(c->n_head_kv, 1);
  EXPECT_FALSE(m.sparse());
  // factor 40, mscale_all_dim 1: magnitude 1, kq_scale = (1 + 0.1 ln 40)^2 / sqrt(40).
  EXPECT_NEAR(m.rope_mag, 1.0, 1e-12);
  const double ms = 1 + 0.1 * std::log(40.0);
  EXPECT_NEAR(m.kq_scale, ms * ms / std::sqrt(40.0), 1e-9);
  // YaRN: the highest frequency is extrapolated (unchanged), the lowest interpolated (/40).
  EXPECT_DOUBLE_EQ(m.inv_freq[0], 1.0);
  EXPECT_NEAR(m.inv_freq[7], std::pow(10000.0, -14.0 / 16) / 40, 1e-15);
  EXPECT_EQ(c->moe.n_group, 4);
  EXPECT_EQ(c->moe.n_group_used, 2);
  EXPECT_EQ(c->moe.gating, ExpertGating::kSigmoid);
  EXPECT_FLOAT_EQ(c->moe.weights_scale, 2.5f);
  EXPECT_EQ(c->n_layer, 3);
  EXPECT_EQ(c->n_nextn, 0);
}

TEST(MlaConfig, GlmDsaFixtureHasTheIndexerASharedLayerAndANextnBlock) {
  if (!HaveFixtures()) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  std::unique_ptr<GgufFile> f;
  auto c = FixtureConfig("tiny-glm-dsa-spm", &f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const MlaConfig& m = c->mla;
  EXPECT_EQ(c->n_layer, 3);
  EXPECT_EQ(c->n_nextn, 1);
  EXPECT_TRUE(m.sparse());
  EXPECT_EQ(m.index_heads, 32);
  EXPECT_EQ(m.index_dim, 64);
  EXPECT_EQ(m.index_top_k, 16);
  EXPECT_EQ(m.index_full, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(m.n_index_layers(), 2);
  EXPECT_EQ(m.IndexSlot(0), 0);
  EXPECT_EQ(m.IndexSlot(1), -1);
  EXPECT_EQ(m.IndexSlot(2), 1);
  EXPECT_DOUBLE_EQ(m.kq_scale, 1 / std::sqrt(56.0));
  const KvLayout l = c->KvLayoutFor(16, KvDtype::kF16);
  EXPECT_EQ(l.kind, AttentionKind::kMla);
  EXPECT_EQ(l.token_bytes(), 3u * 72 * 2 + 2 * 64 * 2);
  // The model loads, NextN block included, and says what it caches in its identity.
  auto model = Model::Load(f->path());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->weights().nextn.size(), 1u);
  EXPECT_GT((*model)->weights().nextn[0].eh_proj.rows, 0);
  EXPECT_GT((*model)->weights().nextn[0].block.ix_k.rows, 0);
  EXPECT_EQ((*model)->weights().layers[1].ix_k.rows, 0);  // the shared layer has no indexer
  EXPECT_NE((*model)->identity().find("-kind-mla-dsa"), std::string::npos);
}

// A header-only deepseek2 file (dim 64, 4 heads), with `edit` applied last.
Result<ModelConfig> Deepseek2(const std::function<void(GgufWriter&)>& edit) {
  GgufWriter w;
  const std::string a = "deepseek2.";
  w.SetString("general.architecture", "deepseek2");
  w.SetU32(a + "embedding_length", 64);
  w.SetU32(a + "block_count", 2);
  w.SetU32(a + "feed_forward_length", 96);
  w.SetU32(a + "attention.head_count", 4);
  w.SetU32(a + "attention.head_count_kv", 1);
  w.SetU32(a + "attention.kv_lora_rank", 32);
  w.SetU32(a + "attention.key_length", 48);
  w.SetU32(a + "attention.value_length", 32);
  w.SetU32(a + "attention.key_length_mla", 40);
  w.SetU32(a + "attention.value_length_mla", 24);
  w.SetU32(a + "rope.dimension_count", 16);
  w.SetU32(a + "expert_count", 8);
  w.SetU32(a + "expert_used_count", 2);
  w.SetU32(a + "expert_feed_forward_length", 32);
  w.SetU32(a + "leading_dense_block_count", 1);
  if (edit) edit(w);
  PG_RETURN_IF_ERROR(w.AddTensor("token_embd.weight", GgmlType::F32, {64, 10}, std::vector<uint8_t>(64 * 10 * 4)));
  PG_ASSIGN_OR_RETURN(std::vector<uint8_t> buf, w.WriteToBuffer());
  PG_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> f, GgufFile::FromBuffer(buf.data(), buf.size()));
  return ModelConfig::FromGguf(*f);
}

TEST(MlaConfig, Deepseek2LiteHasNoQLoraAndSoftmaxWhenGatingIsUnset) {
  auto c = Deepseek2({});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->mla.q_lora, 0);
  EXPECT_EQ(c->moe.gating, ExpertGating::kSoftmax);  // DeepSeek-V2 files
  EXPECT_EQ(c->moe.n_group, 1);
  EXPECT_DOUBLE_EQ(c->mla.kq_scale, 1 / std::sqrt(40.0));
  EXPECT_DOUBLE_EQ(c->mla.rope_mag, 1.0);
}

TEST(MlaConfig, InconsistentShapesAreOneLineErrors) {
  const std::pair<const char*, std::function<void(GgufWriter&)>> bad[] = {
      {"key_length_mla", [](GgufWriter& w) { w.SetU32("deepseek2.attention.key_length_mla", 0); }},
      {"head_count_kv 1", [](GgufWriter& w) { w.SetU32("deepseek2.attention.head_count_kv", 2); }},
      {"kv_lora_rank + rope", [](GgufWriter& w) { w.SetU32("deepseek2.attention.key_length", 50); }},
      {"beta", [](GgufWriter& w) { w.SetF32("deepseek2.rope.scaling.yarn_beta_fast", 16); }},
      {"expert_group_count", [](GgufWriter& w) { w.SetU32("deepseek2.expert_group_count", 3); }},
  };
  for (const auto& [what, edit] : bad) {
    auto c = Deepseek2(edit);
    ASSERT_FALSE(c.ok()) << what;
    EXPECT_NE(c.status().message().find(what), std::string::npos) << c.status().message();
    EXPECT_EQ(c.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace pg
