// Token masks against a brute-force reference on real vocabularies from
// ../shared/fixtures: every token's bytes fed to a copy of the matcher. The
// dead-end case builds its own three-token vocabulary.
#include "constrain/constraint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "constrain/constrain_test_util.h"
#include "constrain/constraint_cache.h"
#include "constrain/output_grammar.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

const fs::path kVocab = fs::path(PROSGROW_SHARED_DIR) / "fixtures" / "vocab";

std::unique_ptr<Tokenizer> LoadVocab(const std::string& name) {
  auto file = GgufFile::Open((kVocab / ("ggml-vocab-" + name + ".gguf")).string());
  if (!file.ok()) return nullptr;
  auto tok = Tokenizer::FromGguf(**file);
  return tok.ok() ? std::move(*tok) : nullptr;
}

// The reference: token t is allowed iff its bytes advance the matcher, or it
// ends generation where the output may end (or where nothing else could go).
TokenBitmask BruteForce(const CompiledConstraint& c, const GrammarMatcher& m) {
  const TokenVocabulary& v = c.vocab();
  TokenBitmask out((static_cast<size_t>(v.n_vocab()) + 63) / 64, 0);
  bool any = false;
  for (int32_t id = 0; id < v.n_vocab(); ++id) {
    if (!v.in_trie(id)) continue;
    GrammarMatcher copy = m;
    if (copy.AdvanceBytes(v.bytes(id))) {
      out[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64);
      any = true;
    }
  }
  if (!any || m.CanEnd())
    for (int32_t id : v.eog_ids()) out[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64);
  return out;
}

const char* kSchema = R"({"type": "object", "properties": {
    "name": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"},
    "ok": {"type": "boolean"}, "kind": {"enum": ["alpha", "beta"]},
    "list": {"type": "array", "items": {"type": "string"}, "maxItems": 2}},
    "required": ["name", "n", "ok"], "additionalProperties": false})";

// Prefixes of one valid output: the states the masks are checked at.
const char* kOutput =
    "{\"name\": \"Zo\\u00eb \xe4\xb8\xad\", \"n\": -12, \"x\": 3.5e2, \"ok\": true, "
    "\"kind\": \"beta\", \"list\": [\"a\"]}";

TEST(ConstraintMask, MatchesBruteForceOnFixtureVocabularies) {
  for (const char* name : {"gpt-2", "llama-spm"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Tokenizer> tok = LoadVocab(name);
    if (!tok) {
      GTEST_SKIP() << "needs ../shared/fixtures/vocab: none under " << kVocab;
    }
    auto vocab = std::make_shared<const TokenVocabulary>(*tok);
    Result<Grammar> g = JsonSchemaGrammar(json::parse(kSchema), "schema");
    ASSERT_TRUE(g.ok());
    CompiledConstraint c(std::move(*g), vocab, "test");
    GrammarMatcher m(&c.grammar());
    const std::string out = kOutput;
    int checked = 0;
    for (size_t i = 0; i <= out.size(); ++i) {
      // Every prefix near the start, then every 3rd byte (the reference is slow).
      if (i > 12 && i % 3 != 0 && i != out.size()) {
        ASSERT_TRUE(m.Advance(static_cast<uint8_t>(out[i])));
        continue;
      }
      TokenBitmask fast, cached;
      c.ComputeMask(m, &fast);
      c.Mask(m, &cached);
      TokenBitmask ref = BruteForce(c, m);
      ASSERT_EQ(fast, ref) << "after " << out.substr(0, i);
      ASSERT_EQ(cached, ref) << "after " << out.substr(0, i);
      ++checked;
      if (i < out.size()) {
        ASSERT_TRUE(m.Advance(static_cast<uint8_t>(out[i])));
      }
    }
    EXPECT_GT(checked, 30);
    // At the end only end-of-generation tokens remain.
    TokenBitmask end;
    c.Mask(m, &end);
    for (int32_t id = 0; id < vocab->n_vocab(); ++id) {
      EXPECT_EQ(MaskHas(end, id),
                std::find(vocab->eog_ids().begin(), vocab->eog_ids().end(), id) != vocab->eog_ids().end());
    }
  }
}

TEST(ConstraintMask, ControlTokensNeverAllowedAndTriePartitionsTheVocabulary) {
  std::unique_ptr<Tokenizer> tok = LoadVocab("llama-spm");
  if (!tok) {
    GTEST_SKIP() << "needs ../shared/fixtures/vocab: none under " << kVocab;
  }
  TokenVocabulary v(*tok);
  size_t in_trie = 0;
  for (int32_t id = 0; id < v.n_vocab(); ++id) {
    in_trie += v.in_trie(id);
    if (tok->IsControl(id)) {
      EXPECT_FALSE(v.in_trie(id)) << id;
    }
  }
  EXPECT_EQ(v.trie().token_ids.size(), in_trie);  // every allowed token ends at exactly one trie node
  size_t body = 0;
  for (uint64_t w : v.string_body_mask()) body += static_cast<size_t>(__builtin_popcountll(w));
  EXPECT_EQ(body + v.non_string_body_trie().token_ids.size(), in_trie);
  EXPECT_GT(body, in_trie / 2);
  ASSERT_FALSE(v.eog_ids().empty());
  EXPECT_EQ(v.eog_ids()[0], tok->eos_id());
}

// Random walks: a matcher following random allowed tokens always stays a
// valid prefix and, at an end-of-generation token, is a complete value.
TEST(ConstraintMatcher, RandomAllowedTokensAlwaysGiveValidJson) {
  std::unique_ptr<Tokenizer> tok = LoadVocab("gpt-2");
  if (!tok) {
    GTEST_SKIP() << "needs ../shared/fixtures/vocab: none under " << kVocab;
  }
  auto vocab = std::make_shared<const TokenVocabulary>(*tok);
  Result<Grammar> g = JsonSchemaGrammar(json::parse(kSchema), "schema");
  ASSERT_TRUE(g.ok());
  const std::vector<std::string> walks = testing::RandomWalks(std::move(*g), vocab, 7, 20, 400);
  for (const std::string& text : walks) {
    const std::string shown = json(text).dump();
    json parsed = json::parse(text, nullptr, false);
    if (parsed.is_discarded()) {
      try {
        json again = json::parse(text);
        (void)again;
      } catch (const std::exception& e) {
        FAIL() << e.what() << " in " << shown;
      }
    }
    EXPECT_TRUE(parsed["name"].is_string()) << shown;
    // An integer: digits only (past 64 bits nlohmann reads it as a float).
    EXPECT_TRUE(parsed["n"].is_number() && std::floor(parsed["n"].get<double>()) == parsed["n"].get<double>()) << shown;
    EXPECT_TRUE(parsed["ok"].is_boolean()) << shown;
    if (parsed.contains("list")) {
      EXPECT_LE(parsed["list"].size(), 2u) << shown;
    }
  }
  EXPECT_GT(walks.size(), 0u);
}

TEST(ConstraintCache, CompilesOncePerSchemaAndVocabulary) {
  std::unique_ptr<Tokenizer> tok = LoadVocab("gpt-2");
  if (!tok) {
    GTEST_SKIP() << "needs ../shared/fixtures/vocab: none under " << kVocab;
  }
  ConstraintCache cache;
  int builds = 0;
  auto build = [&]() -> Result<Grammar> {
    ++builds;
    return JsonObjectGrammar();
  };
  auto vocab = TokenVocabulary::For(*tok);
  EXPECT_EQ(vocab.get(), TokenVocabulary::For(*tok).get());
  auto a = cache.GetOrBuild("json_object", vocab, "json_object", build);
  auto b = cache.GetOrBuild("json_object", vocab, "json_object", build);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(builds, 1);
  auto err = cache.GetOrBuild("bad", vocab, "bad", []() -> Result<Grammar> { return InvalidArgument("no"); });
  EXPECT_FALSE(err.ok());
  for (size_t i = 0; i < ConstraintCache::kMaxEntries + 5; ++i)
    ASSERT_TRUE(cache.GetOrBuild("k" + std::to_string(i), vocab, "k", build).ok());
  EXPECT_EQ(cache.size(), ConstraintCache::kMaxEntries);
}

// Issue 23: a grammar dead end (no token writes the byte it needs) ends the
// output, but not as a whole value: complete() is false, so the engine says
// "length", never "stop". A three-token vocabulary, no ../shared needed.
TEST(ConstraintMatcher, DeadEndFinishesButIsNotComplete) {
  VocabData v;
  v.model = "llama";  // SPM: needs no merges
  v.tokens = {"</s>", "\"", "a"};
  v.scores = {0, -1, -2};
  v.token_types = {static_cast<int32_t>(TokenType::kControl), 1, 1};
  v.eos_id = 0;
  v.bos_id = 0;
  v.unk_id = 0;
  Result<std::unique_ptr<Tokenizer>> tok = Tokenizer::FromVocab(v);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  auto vocab = std::make_shared<const TokenVocabulary>(**tok);
  auto compile = [&](const char* schema) {
    Result<Grammar> g = JsonSchemaGrammar(json::parse(schema), "schema");
    EXPECT_TRUE(g.ok());
    return std::make_shared<const CompiledConstraint>(std::move(*g), vocab, "test");
  };
  ConstraintMatcher dead(compile(R"({"const": "b"})"));  // needs a 'b' no token writes
  ASSERT_TRUE(dead.Accept(1));                           // the opening quote
  EXPECT_TRUE(MaskHas(dead.Allowed(), 0));               // only the end is left
  EXPECT_FALSE(MaskHas(dead.Allowed(), 1) || MaskHas(dead.Allowed(), 2));
  ASSERT_TRUE(dead.Accept(0));
  EXPECT_TRUE(dead.finished());
  EXPECT_FALSE(dead.complete());

  ConstraintMatcher whole(compile(R"({"const": "a"})"));
  for (int32_t t : {1, 2, 1, 0}) ASSERT_TRUE(whole.Accept(t)) << t;
  EXPECT_TRUE(whole.finished() && whole.complete());
}

}  // namespace
}  // namespace pg
