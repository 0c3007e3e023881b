// Issue 12 (sampling), end to end through the real engine on a tiny
// synthetic model (made here; no fixtures needed): logit_bias forces a token
// under greedy decoding, frequency/presence penalties steer a greedy
// repetition exactly as their formula says, and a seed makes a sampled
// request reproducible, alone or batched with other requests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "synth/make_model.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// A tiny random qwen2 model (tiny_model.h).
const std::string& TinyModel() {
  static const std::string path = test::TinyQwen2Model(12);
  return path;
}

struct Output {
  std::vector<int32_t> tokens;
  std::vector<TokenEvent> events;
  std::string finish;
};

class SamplingE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(TinyModel().empty()) << "make-model failed";
    EngineConfig c;
    c.model_path = TinyModel();
    c.threads = 2;
    c.kv_device_bytes = 16ull << 20;
    auto e = Engine::Create(c);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(*e);
    vocab_ = static_cast<int32_t>(engine_->info().n_vocab);
  }

  // Queues one request; its events land in *out. Run engine_->RunUntilIdle()
  // after queueing all the requests that should share batches.
  void Submit(const std::vector<int32_t>& prompt, const SamplingParams& s, Output* out) {
    GenerationRequest r;
    r.id = "s";
    r.id += std::to_string(next_id_++);
    r.prompt = prompt;
    r.sampling = s;
    ASSERT_TRUE(engine_
                    ->Submit(r,
                             [out](const ServiceEvent& ev) {
                               if (ev.kind == ServiceEvent::Kind::kToken) {
                                 out->tokens.push_back(ev.token.token);
                                 out->events.push_back(ev.token);
                               } else {
                                 out->finish = ev.finish.finish_reason;
                               }
                             })
                    .ok());
  }

  Output Run(const std::vector<int32_t>& prompt, const SamplingParams& s) {
    Output out;
    Submit(prompt, s, &out);
    engine_->RunUntilIdle();
    return out;
  }

  std::vector<int32_t> Prompt(int32_t first, int n) const {
    std::vector<int32_t> p;
    for (int i = 0; i < n; ++i) p.push_back((first + 37 * i) % vocab_);
    return p;
  }

  static SamplingParams Greedy(int n) {
    SamplingParams s;
    s.temperature = 0;
    s.max_tokens = n;
    s.ignore_eos = true;
    return s;
  }

  std::unique_ptr<Engine> engine_;
  int32_t vocab_ = 0;
  int next_id_ = 0;
};

TEST_F(SamplingE2e, LogitBiasForcesATokenUnderGreedy) {
  const std::vector<int32_t> prompt = Prompt(300, 12);
  Output plain = Run(prompt, Greedy(10));
  ASSERT_EQ(plain.tokens.size(), 10u);
  // A token the model never picked here, so the bias alone decides.
  int32_t forced = 500;
  while (std::count(plain.tokens.begin(), plain.tokens.end(), forced)) ++forced;
  SamplingParams s = Greedy(10);
  s.logit_bias = {{forced, 100.0f}};
  s.logprobs = true;
  s.top_logprobs = 1;
  Output biased = Run(prompt, s);
  ASSERT_EQ(biased.tokens.size(), 10u);
  for (size_t i = 0; i < biased.tokens.size(); ++i) {
    EXPECT_EQ(biased.tokens[i], forced) << "position " << i;
    // Logprobs stay the model's: the first step sees the same prompt, so its
    // most likely token is the unbiased pick, more likely than the forced one.
    if (i == 0) {
      ASSERT_EQ(biased.events[0].top.size(), 1u);
      EXPECT_EQ(biased.events[0].top[0].first, plain.tokens[0]);
      EXPECT_LT(biased.events[0].logprob, biased.events[0].top[0].second);
    }
  }
  // -100 on the greedy pick bans it.
  s.logit_bias = {{plain.tokens[0], -100.0f}};
  Output banned = Run(prompt, s);
  ASSERT_FALSE(banned.tokens.empty());
  EXPECT_NE(banned.tokens[0], plain.tokens[0]);
}

// A random model rarely repeats itself, so a +15 logit_bias on one token
// makes greedy decoding repeat it; frequency_penalty 2 must then let it
// through only until 2 * count outweighs its lead. Every pick must be the
// argmax of logprob[j] + bias[j] - frequency * count[j] - presence * (count[j] > 0)
// among the reported alternatives (the logprobs are the raw model's, a
// per-step constant apart from its logits; counts are of generated tokens).
TEST_F(SamplingE2e, FrequencyPenaltyBreaksAGreedyRepetition) {
  const float kBias = 15.0f;
  const int n = 40;
  const std::vector<int32_t> prompt = Prompt(1000, 8);
  const int32_t repeated = Run(prompt, Greedy(1)).tokens.at(0);
  SamplingParams s = Greedy(n);
  s.logprobs = true;
  s.top_logprobs = 20;
  s.logit_bias = {{repeated, kBias}};
  Output plain = Run(prompt, s);
  const auto plain_repeats = std::count(plain.tokens.begin(), plain.tokens.end(), repeated);
  ASSERT_GE(plain_repeats, n / 2) << "the premise: greedy decoding repeats the biased token "
                                  << ::testing::PrintToString(plain.tokens);

  s.frequency_penalty = 2.0f;
  s.presence_penalty = 0.5f;
  Output pen = Run(prompt, s);
  ASSERT_EQ(pen.tokens.size(), static_cast<size_t>(n));
  const auto pen_repeats = std::count(pen.tokens.begin(), pen.tokens.end(), repeated);
  EXPECT_GE(pen_repeats, 1);
  EXPECT_LT(pen_repeats, plain_repeats) << ::testing::PrintToString(pen.tokens);
  std::map<int32_t, int> counts;
  int checked = 0;
  for (size_t i = 0; i < pen.tokens.size(); ++i) {
    auto score = [&](int32_t id, float logprob) {
      auto it = counts.find(id);
      const int c = it == counts.end() ? 0 : it->second;
      return logprob + (id == repeated ? kBias : 0.0f) - s.frequency_penalty * static_cast<float>(c) -
             (c > 0 ? s.presence_penalty : 0.0f);
    };
    const TokenEvent& ev = pen.events[i];
    const float chosen = score(ev.token, ev.logprob);
    bool in_top = false;
    for (const auto& [id, lp] : ev.top) {
      in_top |= id == ev.token;
      EXPECT_LE(score(id, lp), chosen + 1e-4f) << "step " << i << ": token " << id << " should have won";
    }
    checked += in_top ? 1 : 0;
    counts[ev.token]++;
  }
  EXPECT_GT(checked, n / 2);
}

TEST_F(SamplingE2e, SeedReproducesSampledOutputAloneAndBatched) {
  const std::vector<int32_t> prompt = Prompt(2000, 10);
  SamplingParams s;
  s.temperature = 1.0f;
  s.max_tokens = 24;
  s.ignore_eos = true;
  s.has_seed = true;
  s.seed = 1234;
  Output first = Run(prompt, s);
  Output second = Run(prompt, s);
  ASSERT_EQ(first.tokens.size(), 24u);
  EXPECT_EQ(first.tokens, second.tokens);

  SamplingParams other = s;
  other.seed = 99;
  Output different = Run(prompt, other);
  EXPECT_NE(different.tokens, first.tokens);

  // The same seeded request batched with others (one unseeded sampled, one
  // greedy, one with the other seed), all decoding in the same steps.
  Output batched, noise1, noise2, noise3;
  SamplingParams unseeded = s;
  unseeded.has_seed = false;
  Submit(Prompt(2500, 14), unseeded, &noise1);
  Submit(prompt, s, &batched);
  Submit(Prompt(40, 6), Greedy(30), &noise2);
  Submit(prompt, other, &noise3);
  engine_->RunUntilIdle();
  EXPECT_EQ(batched.tokens, first.tokens);
  EXPECT_EQ(noise3.tokens, different.tokens);
  EXPECT_EQ(noise1.tokens.size(), 24u);
  EXPECT_EQ(noise2.tokens.size(), 30u);
}

}  // namespace
}  // namespace pg
