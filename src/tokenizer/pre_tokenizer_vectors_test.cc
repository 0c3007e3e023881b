// prosgrow's pre-tokenizer scanners against testdata/pre_tokenizer_vectors.json:
// the splits an independent model of llama.cpp's regex path (Python's
// backtracking `re` over llama.cpp's collapsed text, see
// tools/gen_pre_tokenizer_vectors.py) gives on curated and random texts, for
// one tokenizer.ggml.pre name of every kind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

std::string Show(const std::vector<uint32_t>& cpts, const std::vector<size_t>& pieces) {
  std::string out;
  size_t start = 0;
  for (size_t len : pieces) {
    out += "[";
    for (size_t i = start; i < start + len && i < cpts.size(); ++i) AppendUtf8(cpts[i], &out);
    out += "]";
    start += len;
  }
  return out;
}

TEST(PreTokenizerVectors, MatchTheRegexModelOfLlamaCpp) {
  const fs::path path = fs::path(PROSGROW_SOURCE_DIR) / "src/tokenizer/testdata/pre_tokenizer_vectors.json";
  std::ifstream f(path);
  ASSERT_TRUE(f) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  const auto& texts = doc.at("texts");
  ASSERT_GT(texts.size(), 100u);
  int kinds = 0;
  for (const auto& [name, splits] : doc.at("splits").items()) {
    auto spec = PreTokenizerFromName(name);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    ASSERT_EQ(splits.size(), texts.size()) << name;
    int mismatches = 0;
    for (size_t t = 0; t < texts.size(); ++t) {
      const auto cpts = DecodeUtf8(texts[t].get<std::string>());
      const auto want = splits[t].get<std::vector<size_t>>();
      const auto got = PreTokenize(spec->kind, cpts);
      if (got != want && ++mismatches <= 3) {
        ADD_FAILURE() << name << " on text " << t << "\n  got  " << Show(cpts, got) << "\n  want " << Show(cpts, want);
      }
    }
    EXPECT_EQ(mismatches, 0) << name;
    ++kinds;
  }
  // Every kind but deepseek-llm (its vocab fixture covers it), and bailingmoe's
  // own spelling of Qwen2's regex.
  EXPECT_EQ(kinds, 28);
}

}  // namespace
}  // namespace pg
