// Sampler with a ConstraintMatcher: masked tokens are never picked, greedy
// or sampled, and logprobs stay those of the raw logits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "constrain/constraint.h"
#include "constrain/output_grammar.h"
#include "engine/sampler.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// A small SentencePiece vocabulary: control tokens 0-2, then pieces.
std::unique_ptr<Tokenizer> TinyTokenizer() {
  VocabData v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>", "{", "}", "\"",  "a",    "b",    "ab",  "\":",    "1",     "2", "12",
              "[",     "]",   ",",    "▁", "x", "{\"", "true", "null", "\"}", "<0x0A>", "<ctl>", ":"};
  v.token_types.assign(v.tokens.size(), 1);
  v.token_types[0] = 2;
  v.token_types[1] = v.token_types[2] = 3;
  v.token_types[22] = 6;  // byte token
  v.token_types[23] = 3;  // another control token
  v.scores.assign(v.tokens.size(), 0.0f);
  auto tok = Tokenizer::FromVocab(v);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? std::move(*tok) : nullptr;
}

std::shared_ptr<const CompiledConstraint> Schema(const Tokenizer& tok, const char* schema) {
  Result<Grammar> g = JsonSchemaGrammar(nlohmann::ordered_json::parse(schema), "schema");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::make_shared<const CompiledConstraint>(std::move(*g), std::make_shared<const TokenVocabulary>(tok), "t");
}

std::string Generate(const Tokenizer& tok, std::shared_ptr<const CompiledConstraint> c, SamplingParams p, uint32_t seed,
                     bool* finished) {
  Sampler sampler(p);
  ConstraintMatcher m(std::move(c));
  std::mt19937 rng(seed);
  std::normal_distribution<float> logit(0.0f, 3.0f);
  std::string text;
  const int64_t V = tok.n_vocab() + 3;  // a padded model vocabulary: ids past the tokenizer never allowed
  std::vector<float> logits(static_cast<size_t>(V));
  for (int step = 0; step < 60; ++step) {
    for (float& x : logits) x = logit(rng);
    logits[2] += 4.0f;                           // the model likes to stop early
    logits[static_cast<size_t>(V - 1)] = 50.0f;  // and loves an id the tokenizer lacks
    logits[23] = 40.0f;                          // and a control token
    TokenEvent ev;
    const TokenBitmask allowed = m.Allowed();
    const int32_t id = sampler.Sample(logits.data(), V, &ev, &m);
    EXPECT_TRUE(MaskHas(allowed, id)) << id;
    if (p.logprobs) {
      std::vector<float> ref;
      Sampler::LogSoftmax(logits.data(), V, &ref);
      EXPECT_FLOAT_EQ(ev.logprob, ref[static_cast<size_t>(id)]);  // raw, not renormalised over the mask
    }
    if (m.finished()) break;
    text += tok.TokenToPiece(id);
  }
  *finished = m.finished();
  return text;
}

TEST(SamplerConstraint, GreedyAndSampledPicksStayInTheGrammar) {
  std::unique_ptr<Tokenizer> tok = TinyTokenizer();
  ASSERT_TRUE(tok);
  auto c = Schema(*tok, R"({"type": "object", "properties": {"ab": {"type": "array", "items": {"type": "integer"},
      "maxItems": 3}}, "required": ["ab"], "additionalProperties": false})");
  int completed = 0;
  for (float temperature : {0.0f, 0.7f, 1.5f}) {
    for (uint32_t seed = 0; seed < 20; ++seed) {
      SamplingParams p;
      p.temperature = temperature;
      p.top_k = seed % 3 == 0 ? 5 : 0;
      p.top_p = seed % 2 ? 0.9f : 1.0f;
      p.has_seed = true;
      p.seed = seed;
      p.logprobs = true;
      p.logit_bias = {{4, 100.0f}, {3, -100.0f}};  // bias cannot reach past the mask, either way
      bool finished = false;
      std::string text = Generate(*tok, c, p, seed, &finished);
      if (!finished) continue;  // 60 steps were not enough: still a valid prefix (checked per step)
      ++completed;
      nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
      ASSERT_FALSE(v.is_discarded()) << nlohmann::json(text).dump();
      ASSERT_TRUE(v.contains("ab")) << text;
      EXPECT_LE(v["ab"].size(), 3u) << text;
      for (const auto& x : v["ab"]) EXPECT_TRUE(x.is_number_integer()) << text;
    }
  }
  EXPECT_GT(completed, 20);
}

TEST(SamplerConstraint, CompleteValueForcesEndOfGeneration) {
  std::unique_ptr<Tokenizer> tok = TinyTokenizer();
  ASSERT_TRUE(tok);
  auto c = Schema(*tok, R"({"const": true})");
  SamplingParams p;
  p.temperature = 0.0f;
  bool finished = false;
  // Leading whitespace is allowed (bounded) before the value.
  const std::string text = Generate(*tok, c, p, 1, &finished);
  EXPECT_EQ(text.substr(text.find_first_not_of(" \n")), "true");
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace pg
