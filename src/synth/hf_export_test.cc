// A BF16 GGUF and its Hugging Face export (hf_export.h) load to the same
// model: bit-identical logits on every fixture architecture, MoE included,
// with the export in one file or in shards (experts split across them).
#include "synth/hf_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "backend/cpu/fp8_weights.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/quant_fp.h"
#include "gguf/gguf_file.h"
#include "hf/safetensors_file.h"
#include "hf/safetensors_writer.h"
#include "model/hf_model_source.h"
#include "model/model.h"
#include "model/test_kv_arena.h"
#include "synth/hf_fp8_export.h"
#include "synth/make_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

class HfExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pg_hf_export_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A seeded BF16 GGUF of `arch` (tiny, or tiny-moe for the MoE ones).
  std::string MakeGguf(const std::string& arch) {
    MakeModelOptions o;
    o.shape = arch == "qwen3moe" || arch == "glm4moe" ? "tiny-moe" : "tiny";
    o.type = GgmlType::BF16;
    o.arch = arch;
    o.seed = 11;
    o.n_threads = 1;
    o.out_path = Path(arch + ".gguf");
    EXPECT_TRUE(MakeModel(o).ok());
    return o.out_path;
  }

  // The qwen3 GGUF exported as an FP8 directory `hf`; its one shard, opened (null after a failure).
  std::unique_ptr<SafetensorsFile> ExportFp8Qwen3(const std::string& hf) {
    auto file = GgufFile::Open(MakeGguf("qwen3"));
    EXPECT_TRUE(file.ok());
    if (!file.ok()) return nullptr;
    HfExportOptions eo;
    eo.fp8 = true;
    const Status exported = ExportHfDir(**file, hf, eo);
    EXPECT_TRUE(exported.ok()) << exported.ToString();
    auto f = SafetensorsFile::Open(hf + "/model.safetensors");
    EXPECT_TRUE(f.ok());
    return exported.ok() && f.ok() ? std::move(*f) : nullptr;
  }

  fs::path dir_;
};

// One sequence through a model from position 0, in a private KV arena.
class OneSequence {
 public:
  explicit OneSequence(const Model& m) : m_(m), arena_(m.config(), 16, 64) {}
  // `tokens` at the next positions; logits of every row (all) or of the last.
  void Run(const std::vector<int32_t>& tokens, bool all, float* logits) {
    BatchSeq b;
    b.tokens = tokens.data();
    b.n_tokens = static_cast<int64_t>(tokens.size());
    b.start_pos = pos_;
    b.block_table = arena_.table();
    b.n_blocks = arena_.n_blocks();
    b.all_logits = all;
    b.want_logits = !all;
    EXPECT_TRUE(m_.Forward({&b, 1}, arena_.pages(), pool_, s_, logits).ok());
    pos_ += b.n_tokens;
  }

 private:
  const Model& m_;
  TestKvArena arena_;
  ThreadPool pool_{2};
  ForwardScratch s_;
  int64_t pos_ = 0;
};

// Logits of a 6-token prefill (every row) and one decode step after it.
std::vector<float> RunLogits(const Model& m) {
  const int64_t n_vocab = m.config().n_vocab;
  std::vector<float> out(static_cast<size_t>(n_vocab) * 7);
  OneSequence q(m);
  q.Run({1, 5, 9, 2, 7, 3}, true, out.data());
  q.Run({4}, false, out.data() + 6 * n_vocab);
  return out;
}

class HfExportArch : public HfExportTest, public ::testing::WithParamInterface<std::tuple<std::string, int>> {};

TEST_P(HfExportArch, DirectoryGivesTheGgufsLogitsBitForBit) {
  const auto [arch, shards] = GetParam();
  const std::string gguf = MakeGguf(arch);
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok()) << file.status().message();
  const std::string hf = Path("hf");
  HfExportOptions eo;
  eo.shards = shards;
  ASSERT_TRUE(ExportHfDir(**file, hf, eo).ok());
  EXPECT_EQ(fs::exists(hf + "/model.safetensors.index.json"), shards > 1);
  for (const ModelOptions& mo : {ModelOptions{}, ModelOptionsFor(AttentionMode::kPrecise)}) {
    auto a = Model::Load(gguf, mo);
    auto b = Model::Load(hf, mo);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_STREQ((*b)->source().format(), "safetensors");
    EXPECT_EQ((*a)->config().n_layer, (*b)->config().n_layer);
    EXPECT_EQ((*a)->config().tied_embeddings, (*b)->config().tied_embeddings);
    EXPECT_NE((*a)->identity(), (*b)->identity());
    const std::vector<float> la = RunLogits(**a), lb = RunLogits(**b);
    ASSERT_EQ(la.size(), lb.size());
    EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0) << arch << " shards " << shards;
    EXPECT_NE(la[0], 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Archs, HfExportArch,
    ::testing::Values(std::tuple<std::string, int>{"llama", 1}, std::tuple<std::string, int>{"qwen2", 2},
                      std::tuple<std::string, int>{"qwen3", 1}, std::tuple<std::string, int>{"qwen3moe", 1},
                      std::tuple<std::string, int>{"qwen3moe", 3}, std::tuple<std::string, int>{"glm4moe", 1},
                      std::tuple<std::string, int>{"glm4moe", 2}));

// Greedy continuation of a 6-token prompt: prefill, then n steps of argmax.
std::vector<int32_t> GreedyTokens(const Model& m, int n) {
  std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
  OneSequence q(m);
  std::vector<int32_t> next = {1, 5, 9, 2, 7, 3}, out;
  for (int i = 0; i < n; ++i) {
    q.Run(next, false, logits.data());
    out.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
    next = {out.back()};
  }
  return out;
}

// An FP8 export (E4M3 + 128x128 weight_scale_inv) and the GGUF holding its
// dequantized values in F32 load to bit-identical weights (the FP8_E4M3
// blocks dequantize to the F32 tensors' bits); the FP8 kernels differ from
// the F32 ones only in how they sum (the bound in docs/performance.md: (cols
// + 2) u mag per product), so the logits agree to rounding and the greedy
// tokens are the same.
class HfFp8Arch : public HfExportTest, public ::testing::WithParamInterface<std::tuple<std::string, int>> {};

TEST_P(HfFp8Arch, Fp8DirectoryMatchesItsDequantizedGguf) {
  const auto [arch, shards] = GetParam();
  auto file = GgufFile::Open(MakeGguf(arch));
  ASSERT_TRUE(file.ok()) << file.status().message();
  const std::string hf = Path("hf"), deq = Path("deq.gguf");
  HfExportOptions eo;
  eo.shards = shards;
  eo.fp8 = true;
  ASSERT_TRUE(ExportHfDir(**file, hf, eo).ok());
  ASSERT_TRUE(WriteFp8DequantizedGguf(**file, deq).ok());
  auto a = Model::Load(deq, ModelOptions{});
  auto b = Model::Load(hf, ModelOptions{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  int n_fp8 = 0;
  for (const TensorInfo& t : (*b)->source().tensors()) {
    const TensorInfo* g = (*a)->source().FindTensor(t.name);
    ASSERT_NE(g, nullptr) << t.name;
    if (t.type != GgmlType::FP8_E4M3) continue;
    ++n_fp8;
    ASSERT_EQ(g->type, GgmlType::F32) << t.name;
    ASSERT_EQ(t.n_bytes, Fp8PackedBytes(g->n_bytes / 4 / t.dims[0], t.dims[0])) << t.name;
    std::vector<float> w(g->n_bytes / 4);
    ASSERT_TRUE(DequantizeRow(GgmlType::FP8_E4M3, t.data, w.data(), static_cast<int64_t>(w.size())).ok());
    EXPECT_EQ(std::memcmp(w.data(), g->data, g->n_bytes), 0) << t.name;
  }
  EXPECT_GE(n_fp8, 7 * (*b)->config().n_layer) << arch;  // q k v o and the FFN's three (or their expert stacks)
  const std::vector<float> la = RunLogits(**a), lb = RunLogits(**b);
  ASSERT_EQ(la.size(), lb.size());
  float amax = 0, dmax = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    amax = std::max(amax, std::fabs(la[i]));
    dmax = std::max(dmax, std::fabs(la[i] - lb[i]));
  }
  EXPECT_GT(amax, 0.0f);
  EXPECT_LE(dmax, 1e-4f * amax) << arch << ": largest logit difference " << dmax << " of " << amax;
  EXPECT_EQ(GreedyTokens(**a, 12), GreedyTokens(**b, 12)) << arch;
}

INSTANTIATE_TEST_SUITE_P(Archs, HfFp8Arch,
                         ::testing::Values(std::tuple<std::string, int>{"llama", 1},
                                           std::tuple<std::string, int>{"qwen2", 2},
                                           std::tuple<std::string, int>{"qwen3", 1},
                                           std::tuple<std::string, int>{"qwen3moe", 3},
                                           std::tuple<std::string, int>{"glm4moe", 1}));

// Bad FP8 directories: one line naming the shard (or config.json) and the
// tensor (or field), before any model exists.
TEST_F(HfExportTest, BadFp8DirectoriesAreNamed) {
  const std::string hf = Path("hf"), st = hf + "/model.safetensors";
  std::vector<SafeTensorOut> good;
  {
    auto f = ExportFp8Qwen3(hf);
    ASSERT_NE(f, nullptr);
    for (const SafeTensor& t : f->tensors()) good.push_back({t.name, t.dtype, t.shape, {t.data, t.data + t.n_bytes}});
  }
  auto load = [&](const std::vector<SafeTensorOut>& ts) {
    EXPECT_TRUE(WriteSafetensors(st, ts).ok());
    auto s = HfModelSource::Open(hf);
    const std::string m = s.ok() ? "" : s.status().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  };
  ASSERT_EQ(load(good), "");
  const std::string down = "model.layers.0.mlp.down_proj.weight";  // [64, 256]: scales [1, 2]
  std::vector<SafeTensorOut> ts = good;
  std::erase_if(ts, [&](const SafeTensorOut& t) { return t.name == down + "_scale_inv"; });
  EXPECT_EQ(load(ts), st + ": tensor " + down + " is F8_E4M3 and its scale " + down + "_scale_inv (or " + down +
                          "_scale) is missing");
  ts = good;
  for (SafeTensorOut& t : ts)
    if (t.name == down + "_scale_inv") {
      t.shape = {2, 1};
    }
  EXPECT_EQ(load(ts), st + ": tensor " + down +
                          "_scale_inv has shape [2, 1], config.json quantization_config.weight_block_size [128, 128] "
                          "makes [1, 2]");
  ts = good;
  for (SafeTensorOut& t : ts)
    if (t.name == down) t.bytes[300] = 0x7F;  // row 1, column 44
  EXPECT_EQ(load(ts), st + ": tensor " + down + ": FP8 weight holds a NaN byte at row 1, column 44");
  load(good);
  nlohmann::json config;
  std::ifstream(hf + "/config.json") >> config;
  auto with = [&](const char* field, nlohmann::json v) {
    nlohmann::json c = config;
    c["quantization_config"][field] = v;
    std::ofstream(hf + "/config.json") << c.dump();
    auto s = HfModelSource::Open(hf);
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_EQ(with("fmt", "e5m2"), hf + "/config.json: quantization_config.fmt 'e5m2' is not supported (e4m3)");
  EXPECT_EQ(with("weight_block_size", {64, 64}),
            hf + "/config.json: quantization_config.weight_block_size '[64,64]' is not supported ([128, 128])");
  EXPECT_EQ(with("quant_method", "gptq"),
            hf + "/config.json: quantization_config.quant_method 'gptq' is not supported (fp8)");
  // Without weight_block_size, a [1, 1] block scale is neither per tensor nor per channel.
  nlohmann::json c = config;
  c["quantization_config"].erase("weight_block_size");
  std::ofstream(hf + "/config.json") << c.dump();
  auto s = HfModelSource::Open(hf);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "q_proj.weight_scale_inv has shape [1, 1], expected [] or [1] (per tensor) or [64] (per channel)"),
            std::string::npos)
      << s.status().message();
}

// Without weight_block_size, the scale's shape picks per tensor ([] or [1])
// or per channel ([rows] or [rows, 1]), under either companion name
// (weight_scale_inv, compressed-tensors' weight_scale, as F32 or BF16): each
// loaded weight is exactly its E4M3 byte's value times its scale.
TEST_F(HfExportTest, PerTensorAndPerChannelScalesLoad) {
  const std::string hf = Path("hf"), st = hf + "/model.safetensors";
  std::vector<SafeTensorOut> ts;
  {
    auto f = ExportFp8Qwen3(hf);
    ASSERT_NE(f, nullptr);
    for (const SafeTensor& t : f->tensors()) {
      const std::string suffix = "_scale_inv";
      if (!t.name.ends_with(suffix)) {
        ts.push_back({t.name, t.dtype, t.shape, {t.data, t.data + t.n_bytes}});
        continue;
      }
      const SafeTensor* w = f->Find(t.name.substr(0, t.name.size() - suffix.size()));
      const int64_t rows = w->shape[0];
      const bool down = t.name.find("down_proj") != std::string::npos;
      if (down) {  // per channel, BF16, named weight_scale, shape [rows, 1]: scale 2^-(r % 8 + 6)
        std::vector<uint8_t> b;
        for (int64_t r = 0; r < rows; ++r) {
          const uint16_t h = static_cast<uint16_t>((127 - (r % 8 + 6)) << 7);  // bf16 of 2^-(r % 8 + 6)
          b.push_back(static_cast<uint8_t>(h & 0xFF));
          b.push_back(static_cast<uint8_t>(h >> 8));
        }
        ts.push_back({w->name + "_scale", SafeDtype::kBF16, {rows, 1}, b});
      } else {  // per tensor, shape []: 0.0078125
        const float v = 0.0078125f;
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        ts.push_back({t.name, SafeDtype::kF32, {}, {p, p + 4}});
      }
    }
  }
  ASSERT_TRUE(WriteSafetensors(st, ts).ok());
  nlohmann::json config;
  std::ifstream(hf + "/config.json") >> config;
  config["quantization_config"].erase("weight_block_size");
  std::ofstream(hf + "/config.json") << config.dump();
  auto src = HfModelSource::Open(hf);
  ASSERT_TRUE(src.ok()) << src.status().message();
  auto f = SafetensorsFile::Open(st);
  ASSERT_TRUE(f.ok());
  for (const auto& [gguf, hfname] : {std::pair{"blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"},
                                     std::pair{"blk.1.attn_v.weight", "model.layers.1.self_attn.v_proj.weight"}}) {
    const TensorInfo* t = (*src)->FindTensor(gguf);
    const SafeTensor* raw = (*f)->Find(hfname);
    ASSERT_TRUE(t && raw);
    ASSERT_EQ(t->type, GgmlType::FP8_E4M3);
    const int64_t rows = raw->shape[0], cols = raw->shape[1];
    std::vector<float> w(static_cast<size_t>(rows * cols));
    ASSERT_TRUE(DequantizeRow(GgmlType::FP8_E4M3, t->data, w.data(), rows * cols).ok());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const float scale =
            std::string(gguf).find("down") != std::string::npos ? std::ldexp(1.0f, -(r % 8 + 6)) : 0.0078125f;
        const size_t i = static_cast<size_t>(r * cols + c);
        ASSERT_EQ(w[i], E4m3ToF32(raw->data[i]) * scale) << gguf << " " << r << "," << c;
      }
  }
}

// The model identity (the key of K/V blocks in every tier) carries the weight
// format: each tensor's type is hashed, so BF16 and FP8 loads of one model
// (and the GGUFs beside them) never share blocks, while one directory loaded
// twice keeps its identity (blocks survive a restart).
TEST_F(HfExportTest, Fp8AndBf16LoadsOfOneModelDifferInIdentity) {
  const std::string gguf = MakeGguf("qwen3moe");
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok());
  HfExportOptions fp8;
  fp8.fp8 = true;
  ASSERT_TRUE(ExportHfDir(**file, Path("bf16")).ok());
  ASSERT_TRUE(ExportHfDir(**file, Path("fp8"), fp8).ok());
  ASSERT_TRUE(WriteFp8DequantizedGguf(**file, Path("deq.gguf")).ok());
  std::vector<std::string> ids;
  for (const std::string& p : {gguf, Path("bf16"), Path("fp8"), Path("deq.gguf"), Path("fp8")}) {
    auto m = Model::Load(p, ModelOptions{});
    ASSERT_TRUE(m.ok()) << m.status().message();
    ids.push_back((*m)->identity());
  }
  EXPECT_EQ(ids[2], ids[4]);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = i + 1; j < 4; ++j) EXPECT_NE(ids[i], ids[j]) << i << " " << j;
}

// llama's q/k rows are stored in Hugging Face's rope order: the export of a
// llama GGUF differs from it in exactly those rows, and the load undoes it.
TEST_F(HfExportTest, LlamaQkRowsAreInHuggingFaceOrder) {
  const std::string gguf = MakeGguf("llama");
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(ExportHfDir(**file, Path("hf")).ok());
  auto st = SafetensorsFile::Open(Path("hf") + "/model.safetensors");
  ASSERT_TRUE(st.ok()) << st.status().message();
  const GgufTensorInfo* q = (*file)->FindTensor("blk.0.attn_q.weight");
  const SafeTensor* hq = (*st)->Find("model.layers.0.self_attn.q_proj.weight");
  const SafeTensor* hv = (*st)->Find("model.layers.0.self_attn.v_proj.weight");
  ASSERT_TRUE(q && hq && hv);
  ASSERT_EQ(q->n_bytes, hq->n_bytes);
  EXPECT_NE(std::memcmp(q->data, hq->data, q->n_bytes), 0);
  const GgufTensorInfo* v = (*file)->FindTensor("blk.0.attn_v.weight");
  EXPECT_EQ(std::memcmp(v->data, hv->data, v->n_bytes), 0);
}

TEST_F(HfExportTest, QuantizedGgufIsRefused) {
  MakeModelOptions o;
  o.shape = "tiny";
  o.type = GgmlType::Q8_0;
  o.out_path = Path("q8.gguf");
  o.n_threads = 1;
  ASSERT_TRUE(MakeModel(o).ok());
  auto file = GgufFile::Open(o.out_path);
  ASSERT_TRUE(file.ok());
  Status s = ExportHfDir(**file, Path("hf"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Q8_0"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace pg
