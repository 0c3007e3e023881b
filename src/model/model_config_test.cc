// ModelConfig for the MoE architectures: the keys read per architecture
// (llama.cpp's semantics), and one-line errors for what is not supported.
#include "model/model_config.h"

#include <gtest/gtest.h>

#include <functional>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace pg {
namespace {

// A header-only model file of `arch` (dim 64, 4 / 2 heads of 16, 3 blocks,
// 8 experts top-2 of width 32), with `edit` applied last.
Result<ModelConfig> Config(const std::string& arch, const std::function<void(GgufWriter&)>& edit = {}) {
  GgufWriter w;
  const std::string a = arch + ".";
  w.SetString("general.architecture", arch);
  w.SetU32(a + "embedding_length", 64);
  w.SetU32(a + "block_count", 3);
  w.SetU32(a + "attention.head_count", 4);
  w.SetU32(a + "attention.head_count_kv", 2);
  w.SetU32(a + "attention.key_length", 16);
  w.SetU32(a + "expert_count", 8);
  w.SetU32(a + "expert_used_count", 2);
  w.SetU32(a + "expert_feed_forward_length", 32);
  if (arch == "glm4moe") {
    w.SetU32(a + "feed_forward_length", 96);
    w.SetU32(a + "leading_dense_block_count", 1);
    w.SetU32(a + "expert_shared_count", 1);
    w.SetU32(a + "expert_gating_func", 2);
    w.SetBool(a + "expert_weights_norm", true);
    w.SetF32(a + "expert_weights_scale", 2.5f);
    w.SetU32(a + "rope.dimension_count", 8);
  }
  if (edit) edit(w);
  PG_RETURN_IF_ERROR(w.AddTensor("token_embd.weight", GgmlType::F32, {64, 10}, std::vector<uint8_t>(64 * 10 * 4)));
  PG_ASSIGN_OR_RETURN(std::vector<uint8_t> buf, w.WriteToBuffer());
  PG_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> f, GgufFile::FromBuffer(buf.data(), buf.size()));
  return ModelConfig::FromGguf(*f);
}

TEST(ModelConfigMoe, Qwen3MoeIsSoftmaxRenormalisedEveryLayerWithoutADenseWidth) {
  auto c = Config("qwen3moe", [](GgufWriter& w) {
    // llama.cpp's qwen3moe graph never reads these: softmax, norm, no scale.
    w.SetU32("qwen3moe.expert_gating_func", 2);
    w.SetBool("qwen3moe.expert_weights_norm", false);
    w.SetF32("qwen3moe.expert_weights_scale", 3.0f);
  });
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->qk_norm);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->n_ff, 0);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->moe.gating, ExpertGating::kSoftmax);
  EXPECT_TRUE(c->moe.norm_weights);
  EXPECT_EQ(c->moe.weights_scale, 0.0f);
  for (int64_t l = 0; l < 3; ++l) EXPECT_TRUE(c->IsMoeLayer(l)) << l;
}

TEST(ModelConfigMoe, Glm4MoeReadsGatingNormScaleDenseLeadAndPartialRope) {
  auto c = Config("glm4moe");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->moe.gating, ExpertGating::kSigmoid);
  EXPECT_TRUE(c->moe.norm_weights);
  EXPECT_FLOAT_EQ(c->moe.weights_scale, 2.5f);
  EXPECT_EQ(c->moe.n_shared, 1);
  EXPECT_EQ(c->n_ff, 96);
  EXPECT_EQ(c->n_rot, 8);
  EXPECT_EQ(c->rope_style, RopeStyle::kNeox);
  EXPECT_FALSE(c->IsMoeLayer(0));
  EXPECT_TRUE(c->IsMoeLayer(1));
  // Gating 0 (unset) is sigmoid for glm4moe, 1 softmax; norm defaults to off.
  c = Config("glm4moe", [](GgufWriter& w) { w.SetU32("glm4moe.expert_gating_func", 1); });
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->moe.gating, ExpertGating::kSoftmax);
  // The NextN block after the main ones is not run.
  c = Config("glm4moe", [](GgufWriter& w) { w.SetU32("glm4moe.nextn_predict_layers", 1); });
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->n_layer, 2);
}

TEST(ModelConfigMoe, UnsupportedOrInconsistentExpertsAreOneLineErrors) {
  const std::pair<const char*, std::function<void(GgufWriter&)>> bad[] = {
      {"expert_group_count", [](GgufWriter& w) { w.SetU32("glm4moe.expert_group_count", 3); }},
      {"expert_used_count", [](GgufWriter& w) { w.SetU32("glm4moe.expert_used_count", 9); }},
      {"expert_gating_func", [](GgufWriter& w) { w.SetU32("glm4moe.expert_gating_func", 3); }},
      {"leading_dense_block_count", [](GgufWriter& w) { w.SetU32("glm4moe.leading_dense_block_count", 4); }},
      {"nextn_predict_layers", [](GgufWriter& w) { w.SetU32("glm4moe.nextn_predict_layers", 3); }},
      {"expert_count", [](GgufWriter& w) { w.SetU32("glm4moe.expert_count", 0); }},
  };
  for (const auto& [what, edit] : bad) {
    auto c = Config("glm4moe", edit);
    ASSERT_FALSE(c.ok()) << what;
    EXPECT_NE(c.status().message().find(what), std::string::npos) << c.status().message();
    EXPECT_EQ(c.status().message().find('\n'), std::string::npos);
  }
  // qwen3moe with a zero expert width.
  auto c = Config("qwen3moe", [](GgufWriter& w) { w.SetU32("qwen3moe.expert_feed_forward_length", 0); });
  EXPECT_FALSE(c.ok());
}

}  // namespace
}  // namespace pg
