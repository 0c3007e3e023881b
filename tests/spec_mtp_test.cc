// Issue 48, the MTP drafter (--spec mtp: the model's own NextN block drafts):
//  * greedy outputs equal a run without speculation on 30 prompts of the
//    tiny-glm-dsa fixture (one NextN block), batched, some past the indexer's
//    top-16 and sharing a prefix (the prefix cache hands the trunk's K/V over
//    without its hidden states: the block fills those positions with zeros);
//  * a "mirror" of the fixture whose trunk and block only pass the embedding
//    through (every attention and FFN output projection zero, the block's
//    eh_proj the identity on the embedding half): the block then predicts
//    exactly the token the trunk will, so nearly every draft is accepted, and
//    /metrics reports it under drafter="mtp";
//  * make-model's glm5-mini and deepseek-v3-mini load, generate and draft;
//  * a model without a NextN block is refused with one line (engine and CLI).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "spec_requests.h"
#include "test_util.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

std::string Fixture() { return (fs::path(PROSGROW_SHARED_DIR) / "fixtures/models/tiny-glm-dsa-spm.gguf").string(); }

EngineConfig MtpConfig(const std::string& model, const std::string& drafters) {
  EngineConfig c;
  c.model_path = model;
  c.threads = 2;
  c.kv_device_bytes = 32ull << 20;
  c.ctx_size = 512;
  c.spec.drafters = *ParseDrafterList(drafters);
  return c;
}

// n_requests prompts of 8 + 3 i tokens (the first `shared` tokens the same in all).
std::vector<test::SpecRun> RunRequests(Engine& e, int n_requests, int n, float temp, int shared) {
  return test::RunSpecRequests(e, {"mtp-", 8, 3, 200, 37, 53, 20000}, n_requests, n, temp, shared);
}

TEST(SpecMtp, GreedyOutputsEqualNoSpeculationOnThirtyPrompts) {
  if (!fs::exists(Fixture())) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  auto plain = Engine::Create(MtpConfig(Fixture(), "none"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const auto want = RunRequests(**plain, 30, 24, 0.0f, 6);
  for (const std::string drafters : {"mtp", "ngram,mtp"}) {
    SCOPED_TRACE(drafters);
    auto e = Engine::Create(MtpConfig(Fixture(), drafters));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_NE((*e)->mtp_drafter(), nullptr);
    const auto got = RunRequests(**e, 30, 24, 0.0f, 6);
    int64_t drafted = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
      drafted += got[i].spec.drafted;
    }
    EXPECT_GT(drafted, 0);
    const std::string metrics = (*e)->MetricsText();
    EXPECT_NE(metrics.find("prosgrow_spec_draft_tokens_total{drafter=\"mtp\"}"), std::string::npos) << metrics;
    // Every finished sequence gave the block's cache blocks back.
    const KvCacheManager& kv = (*e)->mtp_drafter()->kv();
    EXPECT_EQ(kv.counters().tiers[kDeviceTier].used_blocks, 0);
    EXPECT_TRUE(kv.CheckIntegrity().ok());
  }
}

// Prompts prefilled over several steps (a small token budget): the block
// catches up on the trunk's rows while the prompt is still prefilling.
TEST(SpecMtp, LongPromptsPrefilledInChunksStayIdentical) {
  if (!fs::exists(Fixture())) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  std::vector<std::vector<int32_t>> out[2];
  for (int spec = 0; spec < 2; ++spec) {
    EngineConfig c = MtpConfig(Fixture(), spec ? "mtp" : "none");
    c.max_batch_tokens = 96;
    auto e = Engine::Create(c);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    out[spec].reserve(3);  // the callbacks hold pointers into it
    for (int i = 0; i < 3; ++i) {
      GenerationRequest r;
      r.id = "long-" + std::to_string(i);
      for (int j = 0; j < 380 + 11 * i; ++j) r.prompt.push_back(300 + (j * 7919 + i * 101) % 25000);
      r.sampling.temperature = 0;
      r.sampling.max_tokens = 20;
      r.sampling.ignore_eos = true;
      out[spec].emplace_back();
      std::vector<int32_t>* o = &out[spec].back();
      ASSERT_TRUE((*e)->Submit(r,
                               [o](const ServiceEvent& ev) {
                                 if (ev.kind == ServiceEvent::Kind::kToken) o->push_back(ev.token.token);
                               })
                      .ok());
    }
    (*e)->RunUntilIdle();
    if (spec) {
      EXPECT_EQ((*e)->mtp_drafter()->kv().counters().tiers[kDeviceTier].used_blocks, 0);
    }
  }
  EXPECT_EQ(out[1], out[0]);
  for (const auto& t : out[1]) EXPECT_EQ(t.size(), 20u);
}

// The fixture with every attention and FFN output projection zero (the
// trunk's final hidden state is the input embedding, so the logits are a
// function of the last token alone), and a NextN block that forwards
// RMSNorm(embedding) of its input token to the same head: it predicts the
// token after its input just as the trunk does.
std::string MirrorModel() {
  auto src = GgufFile::Open(Fixture());
  if (!src.ok()) return "";
  const GgufFile& f = **src;
  GgufWriter w;
  for (const auto& [key, value] : f.metadata())
    if (!w.SetValue(key, value).ok()) return "";
  const int64_t D = f.GetIntOr("glm-dsa.embedding_length", 0);
  const GgufTensorInfo* out_norm = f.FindTensor("output_norm.weight");
  if (D <= 0 || !out_norm) return "";
  auto ends = [](const std::string& s, const char* suffix) {
    return s.size() >= std::strlen(suffix) && s.compare(s.size() - std::strlen(suffix), std::string::npos, suffix) == 0;
  };
  auto f32 = [](const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  for (const GgufTensorInfo& t : f.tensors()) {
    std::vector<uint8_t> bytes(t.data, t.data + t.n_bytes);
    Status st;
    if (ends(t.name, "attn_output.weight") || ends(t.name, "ffn_down.weight") || ends(t.name, "ffn_down_exps.weight") ||
        ends(t.name, "ffn_down_shexp.weight")) {
      std::fill(bytes.begin(), bytes.end(), 0);  // +0 in F16 and F32
      st = w.AddTensor(t.name, t.type, t.dims, std::move(bytes));
    } else if (ends(t.name, "nextn.eh_proj.weight")) {
      std::vector<float> m(static_cast<size_t>(2 * D * D), 0.0f);  // row r = e_r: the enorm half
      for (int64_t r = 0; r < D; ++r) m[static_cast<size_t>(r * 2 * D + r)] = 1.0f;
      st = w.AddTensor(t.name, GgmlType::F32, t.dims, f32(m));
    } else if (ends(t.name, "nextn.enorm.weight")) {
      st = w.AddTensor(t.name, GgmlType::F32, t.dims, f32(std::vector<float>(static_cast<size_t>(D), 1.0f)));
    } else if (ends(t.name, "nextn.shared_head_norm.weight")) {
      st =
          w.AddTensor(t.name, out_norm->type, t.dims, std::vector<uint8_t>(out_norm->data, out_norm->data + t.n_bytes));
    } else {
      st = w.AddTensor(t.name, t.type, t.dims, std::move(bytes));
    }
    if (!st.ok()) return "";
  }
  const fs::path path = fs::temp_directory_path() / ("pg_spec_mtp_mirror_" + std::to_string(::getpid()) + ".gguf");
  return w.Write(path.string()).ok() ? path.string() : "";
}

TEST(SpecMtp, ABlockThatPredictsLikeTheTrunkIsAccepted) {
  if (!fs::exists(Fixture())) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const std::string mirror = MirrorModel();
  ASSERT_FALSE(mirror.empty());
  auto plain = Engine::Create(MtpConfig(mirror, "none"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const auto want = RunRequests(**plain, 4, 32, 0.0f, 0);
  auto e = Engine::Create(MtpConfig(mirror, "mtp"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const auto got = RunRequests(**e, 4, 32, 0.0f, 0);
  int64_t drafted = 0, accepted = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
    drafted += got[i].spec.drafted;
    accepted += got[i].spec.accepted;
  }
  // The block's RMSNorm of an RMSNorm differs from the trunk's by a factor
  // of about 1 - eps/2, so only a near-tie could turn a pick.
  EXPECT_GT(drafted, 4 * 20);
  EXPECT_GE(accepted * 100, drafted * 95) << accepted << " of " << drafted;
  const std::string metrics = (*e)->MetricsText();
  EXPECT_NE(metrics.find("prosgrow_spec_accepted_tokens_total{drafter=\"mtp\"} " + std::to_string(accepted)),
            std::string::npos)
      << metrics;
  // Sampled requests run through the same drafter (point-mass drafts) and finish.
  for (const test::SpecRun& r : RunRequests(**e, 3, 20, 1.0f, 0)) EXPECT_EQ(r.tokens.size(), 20u);
  // And through the CLI: the same tokens as without speculation, drafts reported.
  const std::string base = "generate -m " + mirror + " -p 'one two three four' -n 24 --temp 0 --threads 2 --json";
  auto off = test::RunProsgrow(base);
  auto on = test::RunProsgrow(base + " --spec mtp --spec-draft-max 4");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const auto a = nlohmann::json::parse(off.out), b = nlohmann::json::parse(on.out);
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_GT(b["speculative"]["accepted_tokens"].get<int64_t>(), 0) << on.out;
  fs::remove(mirror);
}

// make-model's MLA shapes (GLM-5.2's and DeepSeek-V3's proportions, one
// NextN block each) load, generate, and draft with their NextN block without
// changing the greedy output. (~300 M parameters each: tens of seconds to write.)
TEST(SpecMtp, MiniShapesGenerateAndDraft) {
  const fs::path dir = fs::temp_directory_path() / ("pg_spec_mtp_shapes_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string shape : {"glm5-mini", "deepseek-v3-mini"}) {
    SCOPED_TRACE(shape);
    const std::string path = (dir / (shape + ".gguf")).string();
    auto made = test::RunProsgrow("make-model --shape " + shape + " --type q4_k --vocab builtin --out " + path);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    std::vector<test::SpecRun> runs[2];
    for (int spec = 0; spec < 2; ++spec) {
      auto e = Engine::Create(MtpConfig(path, spec ? "mtp" : "none"));
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      EXPECT_EQ((*e)->model().config().n_nextn, 1);
      runs[spec] = RunRequests(**e, 2, 12, 0.0f, 0);
    }
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(runs[0][i].tokens.size(), 12u);
      EXPECT_EQ(runs[1][i].tokens, runs[0][i].tokens) << "request " << i;
      EXPECT_GT(runs[1][i].spec.drafted, 0);
    }
    fs::remove(path);
  }
  fs::remove_all(dir);
}

TEST(SpecMtp, AModelWithoutANextnLayerIsRefused) {
  const std::string model = test::TinyQwen2Model(7);
  auto e = Engine::Create(MtpConfig(model, "mtp"));
  ASSERT_FALSE(e.ok());
  const std::string msg = e.status().message();
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("--spec mtp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no NextN"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  auto r = test::RunProsgrow("generate -m " + model + " -p 'a b' -n 4 --spec mtp");
  EXPECT_NE(r.exit_code, 0);
  const size_t at = r.err.find("prosgrow generate:");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no NextN", at), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n', at), r.err.size() - 1) << r.err;
  // Nor may it be combined with a draft model.
  EXPECT_FALSE(ValidateSpecConfig(SpecConfig{{DrafterKind::kDraft, DrafterKind::kMtp}, 4, model}).ok());
}

}  // namespace
}  // namespace pg
