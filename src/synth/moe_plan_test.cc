// make-model's Mixture-of-Experts shapes: the 30b-a3b-mini proportions, the
// qwen3moe / glm4moe tensor sets, and the same metadata keys and tensor
// names (per layer) as the MoE fixtures, which llama.cpp loads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "synth/make_model.h"
#include "synth/model_plan.h"
#include "synth/synth_test_util.h"

namespace pg {
namespace {

TEST(MoePlan, Mini30bA3bKeepsQwen3MoeProportions) {
  auto p = PlanModel("30b-a3b-mini", "qwen3moe", GgmlType::Q4_K, 8192);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const ModelShape& s = p->shape;
  // Qwen3-30B-A3B: 128 experts, top-8, expert width 768 / hidden 2048,
  // q width 32 x 128 = 2 x hidden, 32 / 4 heads.
  EXPECT_EQ(s.n_expert, 128);
  EXPECT_EQ(s.n_expert_used, 8);
  EXPECT_EQ(s.n_ff_exp * 2048, 768 * s.n_embd);
  EXPECT_EQ(s.n_head * s.head_dim, 2 * s.n_embd);
  EXPECT_EQ(s.n_head / s.n_head_kv, 32 / 4);
  auto m = testing::TensorsByName(*p);
  EXPECT_EQ(m["blk.7.ffn_gate_exps.weight"]->dims, (std::vector<int64_t>{512, 192, 128}));
  EXPECT_EQ(m["blk.7.ffn_down_exps.weight"]->dims, (std::vector<int64_t>{192, 512, 128}));
  EXPECT_EQ(m["blk.0.ffn_gate_inp.weight"]->dims, (std::vector<int64_t>{512, 128}));
  EXPECT_EQ(m["blk.0.ffn_gate_inp.weight"]->type, GgmlType::F32);
  EXPECT_EQ(m["blk.0.attn_q.weight"]->dims, (std::vector<int64_t>{512, 1024}));
  EXPECT_EQ(m["blk.0.attn_q.weight"]->type, GgmlType::Q4_K);
  // 192-wide expert rows cannot be K-quants: Q8_0 where Q4_K_M has Q6_K.
  EXPECT_EQ(m["blk.0.ffn_down_exps.weight"]->type, GgmlType::Q8_0);
  EXPECT_EQ(m["blk.1.ffn_down_exps.weight"]->type, GgmlType::Q5_0);  // llama.cpp's fallback for Q4_K
  EXPECT_EQ(m.count("blk.0.ffn_gate.weight"), 0u);
  EXPECT_EQ(m.count("blk.0.attn_q_norm.weight"), 1u);
  // ~0.3B parameters; ~20M active per token (attention, 8 of 128 experts, embeddings not counted).
  EXPECT_GT(p->n_params(), 250'000'000);
  EXPECT_LT(p->n_params(), 350'000'000);
}

TEST(MoePlan, ArchitecturesAndShapesMustAgree) {
  EXPECT_FALSE(PlanModel("tiny-moe", "qwen3", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("tiny", "qwen3moe", GgmlType::F16, 100).ok());
  EXPECT_TRUE(PlanModel("tiny-moe", "glm4moe", GgmlType::F16, 100).ok());
}

TEST(MoePlan, Glm4MoeHasDenseLeadSharedExpertBiasesAndPostAttentionNorm) {
  auto p = PlanModel("tiny-moe", "glm4moe", GgmlType::F16, 1000);
  ASSERT_TRUE(p.ok());
  auto m = testing::TensorsByName(*p);
  EXPECT_EQ(m.count("blk.0.ffn_gate.weight"), 1u);  // leading dense layer
  EXPECT_EQ(m.count("blk.0.ffn_gate_exps.weight"), 0u);
  EXPECT_EQ(m.count("blk.1.ffn_gate_exps.weight"), 1u);
  EXPECT_EQ(m["blk.1.exp_probs_b.bias"]->dims, (std::vector<int64_t>{8}));
  EXPECT_EQ(m["blk.2.ffn_down_shexp.weight"]->dims, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(m.count("blk.1.attn_q.bias"), 1u);
  EXPECT_EQ(m.count("blk.1.post_attention_norm.weight"), 1u);
  EXPECT_EQ(m.count("blk.1.ffn_norm.weight"), 0u);
  EXPECT_EQ(m.count("blk.1.attn_q_norm.weight"), 0u);
}

// {arch}.* keys of a file, without the prefix.
std::set<std::string> ArchKeys(const GgufFile& f, const std::string& arch) {
  std::set<std::string> keys;
  for (const auto& [k, v] : f.metadata())
    if (k.rfind(arch + ".", 0) == 0) keys.insert(k.substr(arch.size() + 1));
  return keys;
}

// Tensor names, with the layer number kept (the layouts have the same depth).
std::set<std::string> TensorNames(const GgufFile& f) {
  std::set<std::string> names;
  for (const auto& t : f.tensors()) names.insert(t.name + "/" + std::to_string(t.dims.size()));
  return names;
}

TEST(MoePlan, TinyMoeWritesTheFixturesKeysAndTensors) {
  const std::pair<const char*, const char*> cases[] = {{"qwen3moe", "tiny-qwen3moe-gpt2"},
                                                       {"glm4moe", "tiny-glm4moe-spm"}};
  for (const auto& [arch, fixture] : cases) {
    SCOPED_TRACE(arch);
    const std::string path = std::string(PROSGROW_SHARED_DIR) + "/fixtures/models/" + fixture + ".gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
    auto fx = GgufFile::Open(path);
    ASSERT_TRUE(fx.ok());
    MakeModelOptions o;
    o.shape = "tiny-moe";
    o.arch = arch;
    o.type = GgmlType::F16;
    o.vocab_path = path;  // the fixture's tokenizer, so the vocabulary dims match too
    o.out_path =
        (std::filesystem::temp_directory_path() / ("pg_moe_plan_" + std::to_string(::getpid()) + ".gguf")).string();
    ASSERT_TRUE(MakeModel(o).ok());
    auto made = GgufFile::Open(o.out_path);
    ASSERT_TRUE(made.ok());
    std::filesystem::remove(o.out_path);
    const std::set<std::string> want = ArchKeys(**fx, arch), got = ArchKeys(**made, arch);
    for (const auto& k : want) EXPECT_TRUE(got.count(k)) << "missing key " << arch << "." << k;
    for (const auto& k : got) {
      // Beyond the fixture's keys only vocab_size and rope.dimension_count (= the defaults).
      if (!want.count(k)) {
        EXPECT_TRUE(k == "vocab_size" || k == "rope.dimension_count") << k;
      }
    }
    EXPECT_EQ(TensorNames(**made), TensorNames(**fx));
    for (const auto& t : (*fx)->tensors()) {
      const GgufTensorInfo* g = (*made)->FindTensor(t.name);
      ASSERT_NE(g, nullptr) << t.name;
      EXPECT_EQ(g->type, t.type) << t.name;
      // Same model width, heads, vocabulary and expert count; only the FFN widths differ.
      EXPECT_EQ(g->dims.back() == t.dims.back() || t.name.find("ffn_") != std::string::npos, true) << t.name;
      EXPECT_EQ(g->dims[0] == t.dims[0] || t.name.find("ffn_") != std::string::npos, true) << t.name;
    }
    for (const char* k : {"expert_count", "expert_used_count"})
      EXPECT_EQ(*(*made)->GetInt(std::string(arch) + "." + k), *(*fx)->GetInt(std::string(arch) + "." + k)) << k;
    if (std::string(arch) == "glm4moe") {
      for (const char* k : {"expert_gating_func", "expert_shared_count", "leading_dense_block_count",
                            "rope.dimension_count", "expert_group_count", "nextn_predict_layers"})
        EXPECT_EQ(*(*made)->GetInt(std::string("glm4moe.") + k), *(*fx)->GetInt(std::string("glm4moe.") + k)) << k;
      EXPECT_EQ(*(*made)->GetBool("glm4moe.expert_weights_norm"), true);
      EXPECT_FLOAT_EQ(static_cast<float>(*(*made)->GetFloat("glm4moe.expert_weights_scale")),
                      static_cast<float>(*(*fx)->GetFloat("glm4moe.expert_weights_scale")));
    }
  }
}

TEST(MoePlan, TinyMoeQ4KFilesHaveKQuantExpertStacks) {
  MakeModelOptions o;
  o.shape = "tiny-moe";
  o.arch = "qwen3moe";
  o.type = GgmlType::Q4_K;
  o.out_path =
      (std::filesystem::temp_directory_path() / ("pg_moe_q4k_" + std::to_string(::getpid()) + ".gguf")).string();
  ASSERT_TRUE(MakeModel(o).ok());
  auto f = GgufFile::Open(o.out_path);
  ASSERT_TRUE(f.ok());
  std::filesystem::remove(o.out_path);
  // 256-wide expert ffn_down rows: Q4_K, and Q6_K in use_more_bits layers (the last of 3).
  EXPECT_EQ((*f)->FindTensor("blk.0.ffn_down_exps.weight")->type, GgmlType::Q4_K);
  EXPECT_EQ((*f)->FindTensor("blk.2.ffn_down_exps.weight")->type, GgmlType::Q6_K);
  EXPECT_EQ((*f)->FindTensor("blk.0.ffn_gate_exps.weight")->type, GgmlType::Q5_0);  // 64-wide rows: the fallback
  EXPECT_EQ((*f)->FindTensor("blk.0.ffn_gate_exps.weight")->dims, (std::vector<int64_t>{64, 256, 8}));
}

}  // namespace
}  // namespace pg
