// A BF16 GGUF and its Hugging Face export (hf_export.h) load to the same
// model: bit-identical logits on every fixture architecture, MoE included,
// with the export in one file or in shards (experts split across them).
#include "synth/hf_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "hf/safetensors_file.h"
#include "model/model.h"
#include "model/test_kv_arena.h"
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

  fs::path dir_;
};

// Logits of a 6-token prefill (every row) and one decode step after it.
std::vector<float> RunLogits(const Model& m) {
  const ModelConfig& c = m.config();
  TestKvArena arena(c, 16, 64);
  ThreadPool pool(2);
  ForwardScratch s;
  std::vector<int32_t> prompt = {1, 5, 9, 2, 7, 3};
  std::vector<float> out(static_cast<size_t>(c.n_vocab) * 7);
  BatchSeq b;
  b.tokens = prompt.data();
  b.n_tokens = 6;
  b.block_table = arena.table();
  b.n_blocks = arena.n_blocks();
  b.all_logits = true;
  EXPECT_TRUE(m.Forward({&b, 1}, arena.pages(), pool, s, out.data()).ok());
  int32_t next = 4;
  BatchSeq d = b;
  d.tokens = &next;
  d.n_tokens = 1;
  d.start_pos = 6;
  d.all_logits = false;
  d.want_logits = true;
  EXPECT_TRUE(m.Forward({&d, 1}, arena.pages(), pool, s, out.data() + 6 * c.n_vocab).ok());
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
