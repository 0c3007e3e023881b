// HfModelSource on hand-made directories: a good one loads; each bad one is
// refused with one line naming the file and the field, before any model
// exists (nothing starts half-loaded).
#include "model/hf_model_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hf/safetensors_writer.h"
#include "model/hf_model_config.h"
#include "model/hf_tensor_names.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json Qwen3Config() {
  return {{"model_type", "qwen3"},
          {"vocab_size", 16},
          {"hidden_size", 8},
          {"num_hidden_layers", 1},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"head_dim", 4},
          {"intermediate_size", 16},
          {"max_position_embeddings", 64},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0},
          {"tie_word_embeddings", true},
          {"torch_dtype", "bfloat16"}};
}

class HfSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("pg_hf_source_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::create_directories(dir_);
    config_ = Qwen3Config();
    tensors_.clear();
    auto mat = [&](const std::string& n, int64_t r, int64_t c) { Add(n, SafeDtype::kBF16, {r, c}); };
    auto vec = [&](const std::string& n, int64_t k) { Add(n, SafeDtype::kF32, {k}); };
    const std::string l = "model.layers.0.";
    mat("model.embed_tokens.weight", 16, 8);
    vec("model.norm.weight", 8);
    vec(l + "input_layernorm.weight", 8);
    mat(l + "self_attn.q_proj.weight", 8, 8);
    mat(l + "self_attn.k_proj.weight", 4, 8);
    mat(l + "self_attn.v_proj.weight", 4, 8);
    mat(l + "self_attn.o_proj.weight", 8, 8);
    vec(l + "self_attn.q_norm.weight", 4);
    vec(l + "self_attn.k_norm.weight", 4);
    vec(l + "post_attention_layernorm.weight", 8);
    mat(l + "mlp.gate_proj.weight", 16, 8);
    mat(l + "mlp.up_proj.weight", 16, 8);
    mat(l + "mlp.down_proj.weight", 8, 16);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Add(const std::string& name, SafeDtype t, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * SafeDtypeBytes(t));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 2 ? 0x3c : i * 7);
    tensors_.push_back({name, t, std::move(shape), std::move(bytes)});
  }
  SafeTensorOut* Tensor(const std::string& name) {
    for (SafeTensorOut& t : tensors_)
      if (t.name == name) return &t;
    return nullptr;
  }
  // Writes the directory and loads it; "" if it loaded, else the error.
  std::string Load() {
    std::ofstream(dir_ + "/config.json") << config_.dump();
    EXPECT_TRUE(WriteSafetensors(dir_ + "/model.safetensors", tensors_).ok());
    auto m = Model::Load(dir_);
    if (m.ok()) return "";
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
    return m.status().message();
  }

  std::string dir_;
  json config_;
  std::vector<SafeTensorOut> tensors_;
};

TEST_F(HfSourceTest, GoodDirectoryLoads) {
  ASSERT_EQ(Load(), "");
  auto src = HfModelSource::Open(dir_);
  ASSERT_TRUE(src.ok());
  auto c = (*src)->Config();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->arch, "qwen3");
  EXPECT_TRUE(c->tied_embeddings);
  EXPECT_TRUE(c->qk_norm);
  const TensorInfo* q = (*src)->FindTensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::BF16);
  EXPECT_EQ(q->dims, (std::vector<int64_t>{8, 8}));
  const TensorInfo* gate = (*src)->FindTensor("blk.0.ffn_gate.weight");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->dims, (std::vector<int64_t>{8, 16}));  // GGUF ne order: [in, out]
  // Read in place: the view points into the shard's mapping.
  EXPECT_EQ(gate->data, (*src)->dir().Find("model.layers.0.mlp.gate_proj.weight")->data);
  EXPECT_EQ((*src)->FindTensor("output.weight"), nullptr);
  auto tok = (*src)->LoadTokenizer();
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("tokenizer.json"), std::string::npos);
}

TEST_F(HfSourceTest, ShapeDisagreeingWithConfigNamesShardTensorAndShapes) {
  Tensor("model.layers.0.self_attn.k_proj.weight")->shape = {8, 4};
  const std::string e = Load();
  EXPECT_NE(e.find(dir_ + "/model.safetensors: tensor model.layers.0.self_attn.k_proj.weight has shape [8, 4], "
                          "config.json makes [4, 8]"),
            std::string::npos)
      << e;
  config_["hidden_size"] = 12;
  Tensor("model.layers.0.self_attn.k_proj.weight")->shape = {4, 8};
  EXPECT_NE(Load().find("tensor model.embed_tokens.weight has shape [16, 8], config.json makes [16, 12]"),
            std::string::npos)
      << Load();
}

TEST_F(HfSourceTest, DtypeDisagreeingWithConfigIsRefused) {
  config_["torch_dtype"] = "float16";
  EXPECT_NE(Load().find("tensor model.embed_tokens.weight is BF16, config.json dtype is float16"), std::string::npos)
      << Load();
  config_["torch_dtype"] = "int4";
  EXPECT_NE(Load().find("config.json: torch_dtype 'int4' is not supported"), std::string::npos) << Load();
}

TEST_F(HfSourceTest, UnknownArchitectureAndQuantMethodAreRefusedByName) {
  config_["model_type"] = "mamba";
  EXPECT_NE(Load().find(dir_ + "/config.json: model_type 'mamba' is not supported"), std::string::npos) << Load();
  config_ = Qwen3Config();
  config_["quantization_config"] = {{"quant_method", "awq"}};
  EXPECT_NE(Load().find("config.json: quantization_config.quant_method 'awq' is not supported"), std::string::npos)
      << Load();
  config_["quantization_config"] = {{"quant_method", "fp8"}, {"fmt", "e5m2"}};
  EXPECT_NE(Load().find("config.json: quantization_config.fmt 'e5m2' is not supported (e4m3)"), std::string::npos)
      << Load();
  // fp8 with every tensor BF16 (as a checkpoint's modules_to_not_convert are): loads.
  config_["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  EXPECT_EQ(Load(), "");
  config_ = Qwen3Config();
  config_["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(Load().find("config.json: rope_scaling.rope_type 'yarn' is not supported"), std::string::npos) << Load();
}

TEST_F(HfSourceTest, Fp8TensorWithoutQuantizationConfigIsRefused) {
  SafeTensorOut* t = Tensor("model.layers.0.mlp.up_proj.weight");
  t->dtype = SafeDtype::kF8_E4M3;
  t->bytes.resize(t->bytes.size() / 2);
  EXPECT_NE(Load().find("tensor model.layers.0.mlp.up_proj.weight is F8_E4M3"), std::string::npos) << Load();
}

TEST_F(HfSourceTest, MissingTensorsAreNamed) {
  std::erase_if(tensors_, [](const SafeTensorOut& t) { return t.name == "model.layers.0.self_attn.k_proj.weight"; });
  EXPECT_NE(Load().find(dir_ + ": tensor model.layers.0.self_attn.k_proj.weight is missing"), std::string::npos)
      << Load();
  SetUp();
  config_["tie_word_embeddings"] = false;
  EXPECT_NE(Load().find("lm_head.weight is missing and config.json tie_word_embeddings is not true"), std::string::npos)
      << Load();
}

TEST_F(HfSourceTest, ConfigFieldsOfTheWrongTypeAreNamed) {
  config_["num_attention_heads"] = "two";
  EXPECT_NE(Load().find("config.json: num_attention_heads is not an integer"), std::string::npos) << Load();
  config_ = Qwen3Config();
  config_["num_key_value_heads"] = 3;
  EXPECT_NE(Load().find("config.json: num_key_value_heads does not divide"), std::string::npos) << Load();
  config_ = Qwen3Config();
  config_.erase("hidden_size");
  EXPECT_NE(Load().find("config.json: hidden_size is missing"), std::string::npos) << Load();
}

TEST(HfModelConfig, Glm4MoeFieldsMapToTheGgufSemantics) {
  json j = {{"model_type", "glm4_moe"},
            {"vocab_size", 100},
            {"hidden_size", 64},
            {"num_hidden_layers", 3},
            {"num_attention_heads", 4},
            {"num_key_value_heads", 2},
            {"head_dim", 16},
            {"intermediate_size", 128},
            {"n_routed_experts", 8},
            {"num_experts_per_tok", 2},
            {"moe_intermediate_size", 32},
            {"n_shared_experts", 1},
            {"first_k_dense_replace", 1},
            {"routed_scaling_factor", 2.5},
            {"partial_rotary_factor", 0.5},
            {"num_nextn_predict_layers", 1},
            {"use_qk_norm", true},
            {"attention_bias", true}};
  auto c = ModelConfigFromHf(j, "config.json", "glm");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->arch, "glm4moe");
  EXPECT_EQ(c->n_layer, 3);  // the nextn layer follows num_hidden_layers and is not run
  EXPECT_EQ(c->n_rot, 8);
  EXPECT_EQ(c->rope_style, RopeStyle::kNeox);
  EXPECT_EQ(c->moe.gating, ExpertGating::kSigmoid);
  EXPECT_EQ(c->moe.n_dense_lead, 1);
  EXPECT_FLOAT_EQ(c->moe.weights_scale, 2.5f);
  EXPECT_TRUE(c->qkv_bias && c->qk_norm);
  j["n_group"] = 4;
  EXPECT_NE(ModelConfigFromHf(j, "config.json", "glm").status().message().find("n_group"), std::string::npos);
}

// llama.cpp's converter: per head, row (i * head_dim/2 + j) of Hugging Face's
// q/k moves to row (2j + i), so rope pairs adjacent dims.
TEST(HfRopeRows, MatchesLlamaCppsPermutation) {
  const std::vector<uint8_t> hf = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13};  // 2 heads of 6 one-byte rows
  std::vector<uint8_t> gguf(hf.size()), back(hf.size());
  HfRopeRows(hf.data(), gguf.data(), 2, 6, 1, /*to_gguf=*/true);
  EXPECT_EQ(gguf, (std::vector<uint8_t>{0, 3, 1, 4, 2, 5, 6, 11, 7, 12, 10, 13}));
  HfRopeRows(gguf.data(), back.data(), 2, 6, 1, /*to_gguf=*/false);
  EXPECT_EQ(back, hf);
}

}  // namespace
}  // namespace pg
