// Issue 15, the draft-model drafter (--spec draft --spec-draft-model FILE):
//  * a draft model whose vocabulary differs from the target's is refused at
//    start with one line naming both files (a swapped pair of tokens in an
//    otherwise identical vocabulary; a fixture of another vocabulary);
//  * the model as its own draft: every draft accepted, greedy and sampled
//    (p == q, so min(1, p/q) = 1), and `generate` prints the same tokens;
//  * a draft KV pool too small for the sequences: drafts are dropped, the
//    output is unchanged.
// Lossless greedy and the chi-square are in spec_decode_test.cc,
// spec_multiturn_test.cc and spec_sampling_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "spec_requests.h"
#include "synth/make_model.h"
#include "test_util.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// The tiny seed-7 model's vocabulary with tokens a and b swapped, as a tiny
// model of seed 9 ("" on failure).
std::string SwappedVocabModel(int32_t a, int32_t b) {
  auto src = GgufFile::Open(test::TinyQwen2Model(7));
  if (!src.ok()) return "";
  GgufWriter w;
  for (const auto& [key, value] : (*src)->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    GgufValue v = value;
    if (key == "tokenizer.ggml.tokens") {
      auto& tokens = std::get<std::vector<std::string>>(v.v);
      std::swap(tokens[static_cast<size_t>(a)], tokens[static_cast<size_t>(b)]);
    }
    if (!w.SetValue(key, v).ok()) return "";
  }
  const fs::path dir = fs::temp_directory_path() / ("pg_spec_draft_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string vocab = (dir / "vocab.gguf").string();
  if (!w.Write(vocab).ok()) return "";
  MakeModelOptions o;
  o.shape = "tiny";
  o.vocab_path = vocab;
  o.type = GgmlType::F16;
  o.arch = "qwen2";
  o.seed = 9;
  o.out_path = (dir / "swapped.gguf").string();
  return MakeModel(o).ok() ? o.out_path : "";
}

EngineConfig DraftConfig(const std::string& target, const std::string& draft, const std::string& drafters = "draft") {
  EngineConfig c;
  c.model_path = target;
  c.threads = 2;
  c.kv_device_bytes = 32ull << 20;
  c.ctx_size = 512;
  c.spec.drafters = *ParseDrafterList(drafters);
  c.spec.draft_model = draft;
  return c;
}

void ExpectVocabularyRefused(const std::string& target, const std::string& draft, const std::string& detail) {
  auto e = Engine::Create(DraftConfig(target, draft));
  ASSERT_FALSE(e.ok());
  const std::string msg = e.status().message();
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("does not share the vocabulary"), std::string::npos) << msg;
  EXPECT_NE(msg.find(target), std::string::npos) << msg;
  EXPECT_NE(msg.find(draft), std::string::npos) << msg;
  EXPECT_NE(msg.find(detail), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(SpecDraft, VocabularyMismatchIsRefusedNamingBothFiles) {
  const std::string target = test::TinyQwen2Model(7);
  const std::string swapped = SwappedVocabModel(300, 301);
  ASSERT_FALSE(swapped.empty());
  ExpectVocabularyRefused(target, swapped, "token 300");
  fs::remove_all(fs::path(swapped).parent_path());
}

TEST(SpecDraft, OtherVocabularyFixtureIsRefused) {
  const fs::path other = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models/tiny-qwen3-spm.gguf";
  if (!fs::exists(other)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  ExpectVocabularyRefused(test::TinyQwen2Model(7), other.string(), "8192 tokens vs 32000");
  // And through the CLI: one line, non-zero exit.
  auto r = test::RunProsgrow("generate -m " + test::TinyQwen2Model(7) + " -p 'a b' -n 4 --spec draft " +
                             "--spec-draft-model " + other.string());
  EXPECT_NE(r.exit_code, 0);
  const size_t at = r.err.find("prosgrow generate:");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not share the vocabulary", at), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n', at), r.err.size() - 1) << r.err;
}

// Prompts of 30 + 7 i tokens; `shared` > 0: all start with the same `shared` tokens.
std::vector<test::SpecRun> RunRequests(Engine& e, int n_requests, int n, float temp, int shared = 0) {
  return test::RunSpecRequests(e, {"draft-", 30, 7, 100, 31, 17, 3000}, n_requests, n, temp, shared);
}

TEST(SpecDraft, OwnDraftAcceptsEveryDraftGreedyAndSampled) {
  const std::string model = test::TinyQwen2Model(7);
  auto e = Engine::Create(DraftConfig(model, model));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  for (float temp : {0.0f, 1.0f}) {
    SCOPED_TRACE(temp);
    const auto runs = RunRequests(**e, 4, 40, temp);
    int64_t drafted = 0, accepted = 0;
    for (const test::SpecRun& r : runs) {
      EXPECT_EQ(r.tokens.size(), 40u);
      drafted += r.spec.drafted;
      accepted += r.spec.accepted;
    }
    EXPECT_GT(drafted, 4 * 30);  // the first token is never drafted; then k = 4 per step
    EXPECT_EQ(accepted, drafted);
  }
  const std::string metrics = (*e)->MetricsText();
  EXPECT_NE(metrics.find("prosgrow_spec_acceptance_rate{drafter=\"draft\"} 1"), std::string::npos) << metrics;
}

TEST(SpecDraft, GenerateWithADraftModelPrintsTheSameTokens) {
  const std::string model = test::TinyQwen2Model(7);
  const std::string base =
      "generate -m " + model + " -p 'one two three four five six' -n 32 --temp 0 --threads 2 --json";
  auto off = test::RunProsgrow(base);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto a = nlohmann::json::parse(off.out);
  for (const std::string& draft : {model, test::TinyQwen2Model(5)}) {
    auto on = test::RunProsgrow(base + " --spec draft,ngram --spec-draft-max 3 --spec-draft-model " + draft);
    ASSERT_EQ(on.exit_code, 0) << on.err;
    const auto b = nlohmann::json::parse(on.out);
    EXPECT_EQ(a["tokens"], b["tokens"]) << draft;
    EXPECT_EQ(a["top_logprobs"], b["top_logprobs"]) << draft;
    EXPECT_GT(b["speculative"]["drafted_tokens"].get<int64_t>(), 0) << on.out;
    if (draft == model) {
      EXPECT_EQ(b["speculative"]["accepted_tokens"], b["speculative"]["drafted_tokens"]) << on.out;
    }
  }
}

TEST(SpecDraft, TooSmallDraftPoolDropsDraftsNotTokens) {
  const std::string model = test::TinyQwen2Model(7);
  EngineConfig plain = DraftConfig(model, "", "none");
  auto ref = Engine::Create(plain);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const auto want = RunRequests(**ref, 6, 24, 0.0f, 30);
  // 16 blocks of each model. The prompts share 30 tokens, which the target's
  // sequences share through the prefix cache and the draft's (private
  // blocks) do not: the draft's pool runs out first.
  EngineConfig c = DraftConfig(model, test::TinyQwen2Model(5), "draft");
  const size_t block =
      KvPages::BlockBytes((*ref)->model().config().n_layer, (*ref)->model().config().kv_dim(), c.page_tokens);
  c.kv_device_bytes = block * 32;
  auto e = Engine::Create(c);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const auto got = RunRequests(**e, 6, 24, 0.0f, 30);
  int64_t drafted = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
    drafted += got[i].spec.drafted;
  }
  EXPECT_GT(drafted, 0);
  EXPECT_EQ((*e)->cache_counters().tiers[kDeviceTier].capacity_blocks, 16);
  EXPECT_EQ((*e)->draft_model()->kv().device_blocks(), 16);
  // Every finished sequence gave its draft blocks back.
  EXPECT_EQ((*e)->draft_model()->kv().counters().tiers[kDeviceTier].used_blocks, 0);
  EXPECT_TRUE((*e)->draft_model()->kv().CheckIntegrity().ok());
  EXPECT_GT((*e)->draft_model()->no_room(), 0) << "the draft pool was meant to run out";
  EXPECT_NE((*e)->MetricsText().find("prosgrow_spec_draft_model_no_room_total " +
                                     std::to_string((*e)->draft_model()->no_room())),
            std::string::npos);
}

}  // namespace
}  // namespace pg
