// make-model's MLA shapes: glm5-mini (glm-dsa) and deepseek-v3-mini
// (deepseek2) keep GLM-5.2's and DeepSeek-V3's proportions where the issue
// asks (latent and head dims, the indexer's top-k 2048 and key length 2 x
// rope dims, 256 experts top-8 with a shared one, expert groups, a NextN
// block), stay a few hundred MB at Q4_K_M, and load as MLA models. That each
// generates tokens (and drafts with its NextN block) is
// tests/spec_mtp_test.cc's MiniShapesGenerateAndDraft.
#include <gtest/gtest.h>

#include <cmath>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "synth/model_plan.h"
#include "synth/synth_test_util.h"

namespace pg {
namespace {

// The metadata of the shape's plan (with a 256-token vocabulary) as a GGUF
// with only a token_embd tensor, read back as a model config.
Result<ModelConfig> ConfigOf(const ModelPlan& big) {
  PG_ASSIGN_OR_RETURN(ModelPlan p, PlanModel(big.shape.name, big.arch, big.requested, 256));
  GgufWriter w;
  AddModelMetadata(p, "t", &w);
  w.SetStringArray("tokenizer.ggml.tokens", std::vector<std::string>(static_cast<size_t>(p.vocab_size), "x"));
  const int64_t d = p.shape.n_embd;
  PG_RETURN_IF_ERROR(w.AddTensor("token_embd.weight", GgmlType::F32, {d, p.vocab_size},
                                 std::vector<uint8_t>(static_cast<size_t>(d * p.vocab_size) * sizeof(float))));
  PG_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, w.WriteToBuffer());
  PG_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> f, GgufFile::FromBuffer(bytes.data(), bytes.size(), "plan.gguf"));
  return ModelConfig::FromGguf(*f);
}

TEST(MlaPlan, Glm5MiniKeepsGlm5Proportions) {
  auto p = PlanModel("glm5-mini", "glm-dsa", GgmlType::Q4_K, 8192);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto c = ConfigOf(*p);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const MlaConfig& m = c->mla;
  EXPECT_EQ(c->arch, "glm-dsa");
  EXPECT_EQ(c->n_layer, 5);
  EXPECT_EQ(c->n_nextn, 1);
  EXPECT_EQ(c->n_embd / c->n_head, 6144 / 64);
  EXPECT_EQ(c->n_embd, 3 * m.q_lora);  // GLM-5: 6144 / 2048
  EXPECT_EQ(m.kv_lora, 512);
  EXPECT_EQ(m.rope, 64);
  EXPECT_EQ(m.nope, 192);
  EXPECT_EQ(m.v_head, 256);
  EXPECT_EQ(m.row(), 576);
  EXPECT_EQ(m.index_heads, 32);
  EXPECT_EQ(m.index_dim, 2 * m.rope);  // llama.cpp's glm-dsa asserts it
  EXPECT_EQ(m.index_top_k, 2048);
  EXPECT_EQ(m.index_full, (std::vector<bool>{true, true, true, false, false}));  // GLM-5.2's pattern
  EXPECT_EQ(c->moe.n_expert, 256);
  EXPECT_EQ(c->moe.n_expert_used, 8);
  EXPECT_EQ(c->moe.n_shared, 1);
  EXPECT_EQ(c->moe.n_dense_lead, 1);
  EXPECT_FLOAT_EQ(c->moe.weights_scale, 2.5f);
  EXPECT_EQ(c->n_ff, 2 * c->n_embd);
  auto t = testing::TensorsByName(*p);
  EXPECT_EQ(t["blk.5.nextn.eh_proj.weight"]->dims, (std::vector<int64_t>{2 * 768, 768}));
  EXPECT_EQ(t.count("blk.5.indexer.attn_k.weight"), 1u);  // the NextN block carries an indexer
  EXPECT_EQ(t.count("blk.3.indexer.attn_k.weight"), 0u);  // a shared layer does not
  EXPECT_EQ(t["blk.1.attn_k_b.weight"]->dims, (std::vector<int64_t>{192, 512, 8}));
  EXPECT_EQ(t["blk.1.ffn_gate_exps.weight"]->dims, (std::vector<int64_t>{768, 128, 256}));
  EXPECT_EQ(t["blk.1.attn_q_a.weight"]->type, GgmlType::Q4_K);
  // A few hundred MB at Q4_K_M.
  EXPECT_LT(p->n_bytes(), 400ull << 20);
  EXPECT_GT(p->n_bytes(), 100ull << 20);
}

TEST(MlaPlan, DeepseekV3MiniKeepsDeepseekV3Proportions) {
  auto p = PlanModel("deepseek-v3-mini", "deepseek2", GgmlType::Q4_K, 8192);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto c = ConfigOf(*p);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const MlaConfig& m = c->mla;
  EXPECT_EQ(c->arch, "deepseek2");
  EXPECT_EQ(c->n_nextn, 1);
  EXPECT_EQ(m.kv_lora, 512);
  EXPECT_EQ(m.rope, 64);
  EXPECT_EQ(m.nope, 128);
  EXPECT_EQ(m.v_head, 128);
  EXPECT_GT(m.q_lora, 0);
  EXPECT_FALSE(m.sparse());
  EXPECT_EQ(c->moe.n_expert, 256);
  EXPECT_EQ(c->moe.n_expert_used, 8);
  EXPECT_EQ(c->moe.n_group, 8);
  EXPECT_EQ(c->moe.n_group_used, 4);
  EXPECT_EQ(c->moe.n_shared, 1);
  // YaRN x40 with DeepSeek's log multiplier: kq_scale above 1 / sqrt(192).
  EXPECT_GT(m.kq_scale, 1.0 / std::sqrt(192.0));
  EXPECT_LT(p->n_bytes(), 400ull << 20);
}

TEST(MlaPlan, MlaShapesTakeOnlyTheirArchitecture) {
  EXPECT_FALSE(PlanModel("glm5-mini", "deepseek2", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("glm5-mini", "glm4moe", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("deepseek-v3-mini", "glm-dsa", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("tiny-moe", "glm-dsa", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("tiny", "deepseek2", GgmlType::F16, 100).ok());
}

}  // namespace
}  // namespace pg
