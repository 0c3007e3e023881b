#include "synth/make_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backend/cpu/quant.h"
#include "gguf/gguf_file.h"
#include "synth/make_model_cli.h"
#include "synth/synth_vocab.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

class MakeModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("pg_make_model_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

MakeModelOptions Tiny(const std::string& out, GgmlType type, const std::string& arch) {
  MakeModelOptions o;
  o.shape = "tiny";
  o.vocab_path = "builtin";
  o.type = type;
  o.arch = arch;
  o.seed = 7;
  o.out_path = out;
  return o;
}

TEST_F(MakeModelTest, TinyFilesOfEveryTypeAndArchLoadWithThePlannedTensors) {
  for (GgmlType type : {GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_K}) {
    for (const std::string arch : {"llama", "qwen2", "qwen3"}) {
      SCOPED_TRACE(std::string(TypeName(type)) + " " + arch);
      const auto opt = Tiny(Path("m.gguf"), type, arch);
      ASSERT_TRUE(MakeModel(opt).ok());
      auto f = GgufFile::Open(opt.out_path);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      auto plan = PlanModelFor(opt);
      ASSERT_TRUE(plan.ok());
      ASSERT_EQ((*f)->tensors().size(), plan->tensors.size());
      for (size_t i = 0; i < plan->tensors.size(); ++i) {
        const auto& want = plan->tensors[i];
        const GgufTensorInfo* got = (*f)->FindTensor(want.name);
        ASSERT_NE(got, nullptr) << want.name;
        EXPECT_EQ(got->type, want.type) << want.name;
        EXPECT_EQ(got->dims, want.dims) << want.name;
      }
      EXPECT_EQ(*(*f)->GetString("general.architecture"), arch);
      EXPECT_EQ(*(*f)->GetInt(arch + ".block_count"), 2);
      EXPECT_EQ(*(*f)->GetString("tokenizer.ggml.model"), "gpt2");
      EXPECT_EQ((*f)->FindTensor("token_embd.weight")->dims[1], plan->vocab_size);
      if (type == GgmlType::Q4_K) {
        // tiny's 64-wide rows fall back to 32-blocks; its 256-wide ffn_down
        // rows are real K-quants (Q6_K in the last layer, Q4_K before).
        EXPECT_EQ((*f)->FindTensor("blk.0.ffn_down.weight")->type, GgmlType::Q4_K);
        EXPECT_EQ((*f)->FindTensor("blk.1.ffn_down.weight")->type, GgmlType::Q6_K);
        EXPECT_EQ((*f)->FindTensor("blk.0.attn_q.weight")->type, GgmlType::Q5_0);
      }
    }
  }
}

TEST_F(MakeModelTest, WeightStatisticsMatchThePlan) {
  const auto opt = Tiny(Path("q8.gguf"), GgmlType::Q8_0, "qwen3");
  ASSERT_TRUE(MakeModel(opt).ok());
  auto f = GgufFile::Open(opt.out_path);
  ASSERT_TRUE(f.ok());
  auto plan = PlanModelFor(opt);
  ASSERT_TRUE(plan.ok());
  for (const auto& t : plan->tensors) {
    const GgufTensorInfo* g = (*f)->FindTensor(t.name);
    std::vector<float> x(static_cast<size_t>(g->n_elements()));
    ASSERT_TRUE(DequantizeRow(g->type, g->data, x.data(), g->n_elements()).ok());
    double s = 0, s2 = 0;
    for (float v : x) s += v, s2 += double{v} * v;
    const double mean = s / x.size(), sd = std::sqrt(s2 / x.size() - mean * mean);
    EXPECT_NEAR(mean, t.mean, 0.05 * std::max(1.0f, t.mean) + 4 * t.std / std::sqrt(double(x.size()))) << t.name;
    // Sampling error of a std estimate is ~std/sqrt(2n); quantization adds a little.
    EXPECT_NEAR(sd, t.std, t.std * (0.05 + 4 / std::sqrt(2.0 * x.size()))) << t.name;
  }
}

TEST_F(MakeModelTest, SameSeedGivesIdenticalBytesWhateverTheThreads) {
  auto a = Tiny(Path("a.gguf"), GgmlType::Q4_K, "qwen2");
  a.n_threads = 1;
  auto b = Tiny(Path("b.gguf"), GgmlType::Q4_K, "qwen2");
  b.n_threads = 3;
  auto c = Tiny(Path("c.gguf"), GgmlType::Q4_K, "qwen2");
  c.seed = 8;
  ASSERT_TRUE(MakeModel(a).ok());
  ASSERT_TRUE(MakeModel(b).ok());
  ASSERT_TRUE(MakeModel(c).ok());
  const std::string ba = ReadAll(a.out_path), bb = ReadAll(b.out_path), bc = ReadAll(c.out_path);
  EXPECT_GT(ba.size(), 100000u);
  EXPECT_EQ(ba, bb);
  ASSERT_EQ(ba.size(), bc.size());
  EXPECT_NE(ba, bc);
}

TEST_F(MakeModelTest, BuiltinVocabularyRoundTripsThroughTheTokenizer) {
  auto v = BuiltinVocab();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  std::printf("builtin vocabulary: %lld tokens\n", static_cast<long long>(v->n_tokens));
  EXPECT_GT(v->n_tokens, 7000);
  EXPECT_LE(v->n_tokens, kBuiltinVocabSize);
  const auto opt = Tiny(Path("v.gguf"), GgmlType::F16, "qwen2");
  ASSERT_TRUE(MakeModel(opt).ok());
  auto f = GgufFile::Open(opt.out_path);
  ASSERT_TRUE(f.ok());
  const GgufFile& g = **f;
  EXPECT_EQ(*g.GetString("tokenizer.ggml.pre"), "qwen2");
  EXPECT_FALSE(*g.GetBool("tokenizer.ggml.add_bos_token"));
  EXPECT_TRUE(g.GetString("tokenizer.chat_template").ok());
  auto tokens = *g.GetStringArray("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens[*g.GetInt("tokenizer.ggml.eos_token_id")], "<|im_end|>");
  EXPECT_EQ(tokens[*g.GetInt("tokenizer.ggml.bos_token_id")], "<|endoftext|>");
  EXPECT_EQ(tokens[*g.GetInt("tokenizer.ggml.padding_token_id")], "<|endoftext|>");
  auto tok = Tokenizer::FromGguf(g);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::string text =
      "The agent calls a tool: {\"name\": \"calculator\", \"arguments\": {\"expression\": \"17 * 23\"}}\n"
      "def f(x):\n    return x + 1  # ünïcödé 🙂";
  auto ids = (*tok)->Encode(text, false, false);
  EXPECT_LT(ids.size(), text.size() / 2);  // merges learned from the corpus compress it
  EXPECT_EQ((*tok)->Decode(ids), text);
  auto special = (*tok)->Encode("<|im_start|>user\nhi<|im_end|>", false, true);
  ASSERT_GE(special.size(), 3u);
  EXPECT_EQ(tokens[special.front()], "<|im_start|>");
  EXPECT_EQ(tokens[special.back()], "<|im_end|>");
}

TEST_F(MakeModelTest, CopiesTheTokenizerOfAVocabFile) {
  const std::string vocab = std::string(PROSGROW_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-gpt-2.gguf";
  if (!std::filesystem::exists(vocab)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  auto opt = Tiny(Path("g.gguf"), GgmlType::Q8_0, "llama");
  opt.vocab_path = vocab;
  ASSERT_TRUE(MakeModel(opt).ok());
  auto src = GgufFile::Open(vocab);
  auto f = GgufFile::Open(opt.out_path);
  ASSERT_TRUE(src.ok() && f.ok());
  size_t n_copied = 0;
  for (const auto& [k, v] : (*src)->metadata()) {
    if (k.rfind("tokenizer.", 0) != 0) continue;
    const GgufValue* got = (*f)->Find(k);
    ASSERT_NE(got, nullptr) << k;
    EXPECT_EQ(got->type, v.type) << k;
    EXPECT_EQ(got->v, v.v) << k;
    ++n_copied;
  }
  EXPECT_GE(n_copied, 3u);
  const int64_t n_vocab = static_cast<int64_t>((*src)->Find("tokenizer.ggml.tokens")->array_size());
  EXPECT_EQ((*f)->FindTensor("output.weight")->dims, (std::vector<int64_t>{64, n_vocab}));
}

TEST_F(MakeModelTest, BadOptionsFailCleanly) {
  auto o = Tiny(Path("x.gguf"), GgmlType::F16, "llama");
  o.vocab_path = Path("missing.gguf");
  EXPECT_FALSE(MakeModel(o).ok());
  o = Tiny(Path("x.gguf"), GgmlType::F16, "mistral");
  EXPECT_FALSE(MakeModel(o).ok());
  o = Tiny("", GgmlType::F16, "llama");
  EXPECT_FALSE(MakeModel(o).ok());
  o = Tiny(Path("no/such/dir/x.gguf"), GgmlType::F16, "llama");
  EXPECT_FALSE(MakeModel(o).ok());
  // A GGUF without a vocabulary.
  o = Tiny(Path("novocab.gguf"), GgmlType::F16, "llama");
  {
    std::ofstream f(Path("empty.gguf"), std::ios::binary);
    const uint8_t hdr[24] = {'G', 'G', 'U', 'F', 3};
    f.write(reinterpret_cast<const char*>(hdr), sizeof(hdr));
  }
  o.vocab_path = Path("empty.gguf");
  Status st = MakeModel(o);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("tokenizer.ggml.tokens"), std::string::npos) << st.message();
}

TEST_F(MakeModelTest, ChatTemplateFileReplacesTheVocabularys) {
  const std::string tmpl = "{% for m in messages %}<｜User｜>{{ m.content }}{% endfor %}<｜Assistant｜>";
  std::ofstream(Path("t.jinja")) << tmpl;
  auto o = Tiny(Path("t.gguf"), GgmlType::F16, "qwen2");
  o.chat_template_path = Path("t.jinja");
  ASSERT_TRUE(MakeModel(o).ok());
  auto f = GgufFile::Open(o.out_path);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*(*f)->GetString("tokenizer.chat_template"), tmpl);
  o.chat_template_path = Path("missing.jinja");
  Status st = MakeModel(o);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing.jinja"), std::string::npos) << st.message();
}

int RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "make-model");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return MakeModelMain(static_cast<int>(argv.size()), argv.data());
}

TEST_F(MakeModelTest, Cli) {
  EXPECT_EQ(RunCli({"--help"}), 0);
  EXPECT_EQ(RunCli({}), 2);                   // --shape/--out missing
  EXPECT_EQ(RunCli({"--shape", "tiny"}), 2);  // --out missing
  EXPECT_EQ(RunCli({"--shape", "huge", "--out", Path("c.gguf")}), 2);
  EXPECT_EQ(RunCli({"--shape", "tiny", "--out", Path("c.gguf"), "--type", "q3_k"}), 2);
  EXPECT_EQ(RunCli({"--shape", "tiny", "--out", Path("c.gguf"), "--seed", "abc"}), 2);
  EXPECT_EQ(RunCli({"--shape", "tiny", "--out", Path("c.gguf"), "--bogus"}), 2);
  EXPECT_FALSE(std::filesystem::exists(Path("c.gguf")));
  EXPECT_EQ(RunCli({"--shape", "tiny", "--out", Path("c.gguf"), "--type", "q8_0", "--arch", "qwen3", "--seed", "5",
                    "--vocab", "builtin"}),
            0);
  auto f = GgufFile::Open(Path("c.gguf"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*(*f)->GetString("general.architecture"), "qwen3");
  EXPECT_EQ((*f)->FindTensor("blk.0.attn_q.weight")->type, GgmlType::Q8_0);
}

TEST_F(MakeModelTest, EnsureDefaultModelCreatesOnceAndReuses) {
  auto p = EnsureDefaultModel(dir_.string());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto f = GgufFile::Open(*p);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*(*f)->GetString("general.architecture"), "qwen2");
  EXPECT_EQ(*(*f)->GetInt("qwen2.embedding_length"), 512);
  const auto mtime = std::filesystem::last_write_time(*p);
  auto again = EnsureDefaultModel(dir_.string());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *p);
  EXPECT_EQ(std::filesystem::last_write_time(*p), mtime);
  // No temp files left behind.
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    n += e.path().string().find(".tmp.") == std::string::npos;
  EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace pg
