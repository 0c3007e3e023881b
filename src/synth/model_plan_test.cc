#include "synth/model_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "synth/synth_test_util.h"

namespace pg {
namespace {

using testing::TensorsByName;

TEST(ModelPlan, Qwen05MatchesQwen25HalfBillionLayout) {
  auto p = PlanModel("0.5b", "qwen2", GgmlType::F16, 151936);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Qwen2.5-0.5B has 494M parameters (with its 151936-token vocabulary).
  EXPECT_NEAR(p->n_params() / 1e6, 494.0, 1.0);
  EXPECT_EQ(p->shape.n_layer, 24);
  EXPECT_TRUE(p->shape.tied_embeddings);
  EXPECT_EQ(p->file_type, 1u);
  auto m = TensorsByName(*p);
  EXPECT_EQ(m.count("output.weight"), 0u);  // tied
  ASSERT_EQ(m.count("blk.23.attn_q.bias"), 1u);
  EXPECT_EQ(m["token_embd.weight"]->dims, (std::vector<int64_t>{896, 151936}));
  EXPECT_EQ(m["blk.0.attn_q.weight"]->dims, (std::vector<int64_t>{896, 896}));
  EXPECT_EQ(m["blk.0.attn_k.weight"]->dims, (std::vector<int64_t>{896, 128}));
  EXPECT_EQ(m["blk.0.attn_v.bias"]->dims, (std::vector<int64_t>{128}));
  EXPECT_EQ(m["blk.0.ffn_down.weight"]->dims, (std::vector<int64_t>{4864, 896}));
  EXPECT_EQ(m["blk.5.ffn_norm.weight"]->type, GgmlType::F32);
  EXPECT_EQ(m["blk.5.ffn_up.weight"]->type, GgmlType::F16);
  // 1 + 24 * 12 + 1 tensors.
  EXPECT_EQ(p->tensors.size(), 290u);
  EXPECT_EQ(p->n_bytes(), static_cast<uint64_t>(p->n_params() - 24 * (2 * 896 + 896 + 256) - 896) * 2 +
                              (24 * (2 * 896 + 896 + 256) + 896) * 4);
}

TEST(ModelPlan, Qwen15MatchesQwen25OnePointFiveBillionLayout) {
  auto p = PlanModel("1.5b", "qwen2", GgmlType::Q8_0, 151936);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->n_params() / 1e9, 1.54, 0.01);  // Qwen2.5-1.5B: 1.54B
  auto m = TensorsByName(*p);
  EXPECT_EQ(m["blk.27.attn_q.weight"]->dims, (std::vector<int64_t>{1536, 1536}));
  EXPECT_EQ(m["blk.27.attn_k.weight"]->dims, (std::vector<int64_t>{1536, 256}));
  EXPECT_EQ(m["blk.27.ffn_gate.weight"]->dims, (std::vector<int64_t>{1536, 8960}));
  EXPECT_EQ(m["blk.27.ffn_gate.weight"]->type, GgmlType::Q8_0);
  EXPECT_EQ(p->file_type, 7u);
  EXPECT_EQ(p->shape.head_dim, 128);
  EXPECT_FLOAT_EQ(p->shape.rope_theta, 1e6f);
}

TEST(ModelPlan, Q4KIsAQ4KMLikeMix) {
  auto p = PlanModel("1.5b", "qwen2", GgmlType::Q4_K, 151936);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->file_type, 15u);
  auto m = TensorsByName(*p);
  EXPECT_EQ(m["token_embd.weight"]->type, GgmlType::Q6_K);
  EXPECT_EQ(m["blk.0.attn_q.weight"]->type, GgmlType::Q4_K);
  EXPECT_EQ(m["blk.0.ffn_up.weight"]->type, GgmlType::Q4_K);
  // use_more_bits(i, 28): i < 3, i >= 24, or (i - 3) % 3 == 2.
  for (int i = 0; i < 28; ++i) {
    const bool more = i < 3 || i >= 24 || (i - 3) % 3 == 2;
    const GgmlType want = more ? GgmlType::Q6_K : GgmlType::Q4_K;
    EXPECT_EQ(m["blk." + std::to_string(i) + ".ffn_down.weight"]->type, want) << i;
    EXPECT_EQ(m["blk." + std::to_string(i) + ".attn_v.weight"]->type, want) << i;
    EXPECT_EQ(m["blk." + std::to_string(i) + ".attn_output.weight"]->type, GgmlType::Q4_K) << i;
  }
  // 896-wide rows are not a multiple of 256: 32-blocks instead.
  auto h = PlanModel("0.5b", "qwen2", GgmlType::Q4_K, 1000);
  ASSERT_TRUE(h.ok());
  auto hm = TensorsByName(*h);
  EXPECT_EQ(hm["token_embd.weight"]->type, GgmlType::Q8_0);
  EXPECT_EQ(hm["blk.1.attn_q.weight"]->type, GgmlType::Q5_0);
  EXPECT_EQ(hm["blk.4.ffn_down.weight"]->type, GgmlType::Q4_K);  // 4864 rows are fine
  EXPECT_EQ(hm["blk.5.ffn_down.weight"]->type, GgmlType::Q6_K);
  EXPECT_EQ(hm["blk.0.ffn_down.weight"]->type, GgmlType::Q6_K);
}

TEST(ModelPlan, ArchitecturesDifferInBiasesAndQkNorms) {
  for (const std::string arch : {"llama", "qwen2", "qwen3"}) {
    auto p = PlanModel("60m", arch, GgmlType::F16, 8192);
    ASSERT_TRUE(p.ok()) << arch;
    auto m = TensorsByName(*p);
    EXPECT_EQ(m.count("blk.7.attn_q.bias"), arch == "qwen2" ? 1u : 0u) << arch;
    EXPECT_EQ(m.count("blk.7.attn_k.bias"), arch == "qwen2" ? 1u : 0u) << arch;
    EXPECT_EQ(m.count("blk.7.attn_q_norm.weight"), arch == "qwen3" ? 1u : 0u) << arch;
    EXPECT_EQ(m.count("blk.7.attn_k_norm.weight"), arch == "qwen3" ? 1u : 0u) << arch;
    EXPECT_EQ(m.count("output.weight"), 1u);  // 60m is untied
    if (arch == "qwen3") {
      EXPECT_EQ(m["blk.0.attn_q_norm.weight"]->dims, (std::vector<int64_t>{64}));
    }
    for (const auto& t : p->tensors) {
      EXPECT_EQ(t.type, t.dims.size() == 1 ? GgmlType::F32 : GgmlType::F16) << t.name;
    }
  }
}

TEST(ModelPlan, ScalesFollowFanIn) {
  auto p = PlanModel("60m", "llama", GgmlType::F16, 8192);
  ASSERT_TRUE(p.ok());
  auto m = TensorsByName(*p);
  EXPECT_NEAR(m["blk.0.attn_q.weight"]->std, std::sqrt(3.0 / 512), 1e-6);
  EXPECT_NEAR(m["blk.0.attn_v.weight"]->std, 1 / std::sqrt(512.0), 1e-6);
  EXPECT_NEAR(m["blk.0.ffn_down.weight"]->std, 1 / std::sqrt(1536.0), 1e-6);
  EXPECT_FLOAT_EQ(m["blk.0.attn_norm.weight"]->mean, 1.0f);
  EXPECT_FLOAT_EQ(m["token_embd.weight"]->std, 1.0f);
  // Logit std 4 * (512/64)^(1/4) = 6.73 at unit-RMS input.
  EXPECT_NEAR(m["output.weight"]->std * std::sqrt(512.0), 4 * std::pow(8.0, 0.25), 1e-4);
}

TEST(ModelPlan, RejectsBadOptions) {
  EXPECT_FALSE(PlanModel("2b", "qwen2", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("tiny", "gpt2", GgmlType::F16, 100).ok());
  EXPECT_FALSE(PlanModel("tiny", "llama", GgmlType::Q5_K, 100).ok());
  EXPECT_FALSE(PlanModel("tiny", "llama", GgmlType::F16, 0).ok());
  EXPECT_FALSE(ParseSynthType("q5_k").ok());
  EXPECT_EQ(*ParseSynthType("Q4_K"), GgmlType::Q4_K);
  EXPECT_EQ(*ParseSynthType("bf16"), GgmlType::BF16);
  EXPECT_EQ(*ParseSynthType("NVFP4"), GgmlType::NVFP4);
  EXPECT_EQ(*ParseSynthType("fp8_e4m3"), GgmlType::FP8_E4M3);
  EXPECT_TRUE(PlanModel("tiny-moe", "qwen3moe", GgmlType::NVFP4, 100).ok());
  EXPECT_TRUE(PlanModel("0.5b", "qwen2", GgmlType::FP8_E4M3, 100).ok());
  for (const auto& s : ModelShapeNames()) EXPECT_TRUE(FindModelShape(s).ok()) << s;
}

TEST(ModelPlan, MetadataHasTheKeysLlamaCppReads) {
  for (const std::string arch : {"llama", "qwen2", "qwen3"}) {
    auto p = PlanModel("0.5b", arch, GgmlType::Q8_0, 5000);
    ASSERT_TRUE(p.ok());
    GgufWriter w;
    AddModelMetadata(*p, "x", &w);
    auto buf = w.WriteToBuffer();
    ASSERT_TRUE(buf.ok());
    auto f = GgufFile::FromBuffer(buf->data(), buf->size());
    ASSERT_TRUE(f.ok());
    const GgufFile& g = **f;
    const std::string a = arch + ".";
    EXPECT_EQ(*g.GetString("general.architecture"), arch);
    EXPECT_EQ(*g.GetInt("general.file_type"), 7);
    EXPECT_EQ(*g.GetInt("general.quantization_version"), 2);
    EXPECT_EQ(*g.GetInt(a + "context_length"), 32768);
    EXPECT_EQ(*g.GetInt(a + "embedding_length"), 896);
    EXPECT_EQ(*g.GetInt(a + "block_count"), 24);
    EXPECT_EQ(*g.GetInt(a + "feed_forward_length"), 4864);
    EXPECT_EQ(*g.GetInt(a + "attention.head_count"), 14);
    EXPECT_EQ(*g.GetInt(a + "attention.head_count_kv"), 2);
    EXPECT_EQ(*g.GetInt(a + "vocab_size"), 5000);
    EXPECT_FLOAT_EQ(static_cast<float>(*g.GetFloat(a + "rope.freq_base")), 1e6f);
    EXPECT_FLOAT_EQ(static_cast<float>(*g.GetFloat(a + "attention.layer_norm_rms_epsilon")), 1e-6f);
    EXPECT_EQ(g.Find(a + "rope.freq_base")->type, GgufValueType::FLOAT32);
    EXPECT_EQ(g.Find(a + "block_count")->type, GgufValueType::UINT32);
    EXPECT_EQ(g.Find(a + "attention.key_length") != nullptr, arch == "qwen3");
    if (arch == "qwen3") {
      EXPECT_EQ(*g.GetInt(a + "attention.key_length"), 64);
    }
  }
}

}  // namespace
}  // namespace pg
