// Long prefills in slices (EngineConfig::prefill_slice_tokens) through the
// whole engine: short prompts submitted beside a long one decode while the
// long one advances a slice per step, and every output is the one each
// prompt gets alone.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/engine.h"
#include "test_util.h"
#include "testing/multi_turn_workload.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

struct Outcome {
  std::vector<int32_t> tokens;
  // Tokens each other request had emitted when this one emitted its first.
  std::map<std::string, size_t> others_at_first_token;
};

// Submits every prompt (the first one step before the rest), then steps the
// engine until idle; greedy, `n` tokens each.
std::map<std::string, Outcome> RunTogether(Engine& e, const std::vector<std::vector<int32_t>>& prompts, int n) {
  std::map<std::string, Outcome> runs;
  auto submit = [&](size_t i) {
    GenerationRequest r;
    r.id = "p" + std::to_string(i);
    r.prompt = prompts[i];
    r.sampling.temperature = 0;
    r.sampling.max_tokens = n;
    r.sampling.ignore_eos = true;
    const std::string id = r.id;
    EXPECT_TRUE(e.Submit(r, [&runs, id](const ServiceEvent& ev) {
                   if (ev.kind != ServiceEvent::Kind::kToken) return;
                   Outcome& self = runs[id];
                   if (self.tokens.empty())
                     for (const auto& [other, run] : runs)
                       if (other != id) self.others_at_first_token[other] = run.tokens.size();
                   self.tokens.push_back(ev.token.token);
                 }).ok());
  };
  submit(0);
  e.Step();
  for (size_t i = 1; i < prompts.size(); ++i) submit(i);
  e.RunUntilIdle();
  return runs;
}

TEST(EnginePrefillSlice, ShortPromptsDecodeWhileALongOneAdvancesInSlices) {
  const std::string model = test::TinyQwen2Model(7);
  ASSERT_FALSE(model.empty()) << "make-model failed";
  EngineConfig config = test::ReferenceConfig(model);
  config.max_batch_tokens = 32;
  config.long_prefill_tokens = 16;
  config.prefill_slice_tokens = 4;
  config.fairness_s = 600;  // no prefill turns overdue however slow the machine
  std::mt19937 rng(3);
  std::vector<std::vector<int32_t>> prompts = {test::Message(rng, 120, 2000)};
  for (int i = 0; i < 3; ++i) prompts.push_back(test::Message(rng, 6 + 3 * i, 2000));
  constexpr int kTokens = 12;

  std::vector<std::vector<int32_t>> alone;
  {
    auto e = Engine::Create(config);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    for (size_t i = 0; i < prompts.size(); ++i) alone.push_back(RunTogether(**e, {prompts[i]}, kTokens)["p0"].tokens);
  }
  auto sliced = Engine::Create(config);
  ASSERT_TRUE(sliced.ok()) << sliced.status().ToString();
  std::map<std::string, Outcome> together = RunTogether(**sliced, prompts, kTokens);
  for (size_t i = 0; i < prompts.size(); ++i)
    EXPECT_EQ(together["p" + std::to_string(i)].tokens, alone[i]) << "prompt " << i;
  // The long prompt (104 tokens left after its first step alone, 16 tokens:
  // the threshold) advanced 4 tokens a step beside the short ones' decodes:
  // they had all their tokens (12 steps) before its remaining prefill
  // reached the 16-token threshold.
  for (int i = 1; i <= 3; ++i)
    EXPECT_EQ(together["p0"].others_at_first_token["p" + std::to_string(i)], size_t{kTokens}) << "prompt " << i;

  // With whole chunks the long prompt finishes first (shortest-first gives
  // the short ones the budget, the long one the rest of it).
  config.prefill_slice_tokens = 0;
  auto whole = Engine::Create(config);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::map<std::string, Outcome> unsliced = RunTogether(**whole, prompts, kTokens);
  for (int i = 1; i <= 3; ++i)
    EXPECT_LT(unsliced["p0"].others_at_first_token["p" + std::to_string(i)], size_t{kTokens}) << "prompt " << i;
}

}  // namespace
}  // namespace pg
