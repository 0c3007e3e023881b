// Checks the tokenizers token for token against llama.cpp's outputs stored
// in ../shared/fixtures: the vocab test pairs (ggml-vocab-*.gguf with .inp
// and .out) and the prompt tokens of every model's expected-*.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gguf/gguf_file.h"
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(PROSGROW_SHARED_DIR) / "fixtures";

std::string ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The .inp convention of llama.cpp's test-tokenizer-0: test strings joined
// by "\n__ggml_vocab_test__\n", with a trailing separator after the last one.
std::vector<std::string> SplitInputs(const std::string& all) {
  static const std::string kSep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t hit = all.find(kSep, pos);
    if (hit == std::string::npos) break;
    out.push_back(all.substr(pos, hit - pos));
    pos = hit + kSep.size();
  }
  if (pos < all.size()) out.push_back(all.substr(pos));
  return out;
}

std::vector<std::vector<int32_t>> ParseOutputs(const std::string& all) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(all);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ids(line);
    std::vector<int32_t> v;
    int32_t id;
    while (ids >> id) v.push_back(id);
    out.push_back(std::move(v));
  }
  return out;
}

std::string Escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (c == '\r')
      o += "\\r";
    else
      o += static_cast<char>(c);
  }
  return o;
}

std::vector<fs::path> VocabFiles() {
  std::vector<fs::path> files;
  const fs::path dir = kFixtures / "vocab";
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ggml-vocab-", 0) == 0 && e.path().extension() == ".gguf") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TokenizerFixtures, VocabPairs) {
  const auto files = VocabFiles();
  if (files.empty()) GTEST_SKIP() << "needs ../shared/fixtures/vocab: none under " << kFixtures;
  int pairs = 0;
  for (const fs::path& gguf : files) {
    const fs::path inp = gguf.string() + ".inp";
    const fs::path outp = gguf.string() + ".out";
    if (!fs::exists(inp) || !fs::exists(outp)) continue;
    SCOPED_TRACE(gguf.filename().string());
    auto file = GgufFile::Open(gguf.string());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto tok = Tokenizer::FromGguf(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    const auto inputs = SplitInputs(ReadAll(inp));
    const auto expected = ParseOutputs(ReadAll(outp));
    ASSERT_EQ(inputs.size(), expected.size());
    int failures = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto got = (*tok)->Encode(inputs[i], /*add_special=*/false, /*parse_special=*/false);
      EXPECT_EQ(got, expected[i]) << "case " << i << ": '" << Escape(inputs[i]) << "'";
      if (got != expected[i]) ++failures;
      ++pairs;
    }
    EXPECT_EQ(failures, 0);
  }
  EXPECT_GT(pairs, 0);
}

// Calls fn(stem, tokenizer, expected json) for every fixture model that has an
// oracle file; returns how many.
template <typename Fn>
int ForEachFixtureModel(const fs::path& models, Fn fn) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(models)) {
    if (e.path().extension() != ".gguf") continue;
    const std::string stem = e.path().stem().string();
    const fs::path expected_path = kFixtures / "expected" / ("expected-" + stem + ".json");
    if (!fs::exists(expected_path)) continue;
    SCOPED_TRACE(stem);
    auto file = GgufFile::Open(e.path().string());
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    if (!file.ok()) continue;
    auto tok = Tokenizer::FromGguf(**file);
    EXPECT_TRUE(tok.ok()) << tok.status().ToString();
    if (!tok.ok()) continue;
    fn(**tok, nlohmann::json::parse(ReadAll(expected_path)));
    ++n;
  }
  return n;
}

// Generated text is the concatenation of the token pieces (what the server
// streams); the oracle stored it lossily converted to UTF-8.
TEST(TokenizerFixtures, ModelGeneratedText) {
  const fs::path models = kFixtures / "models";
  if (!fs::is_directory(models)) GTEST_SKIP() << "needs ../shared/fixtures/models (absent)";
  int cases = 0;
  ForEachFixtureModel(models, [&](const Tokenizer& tok, const nlohmann::json& expected) {
    for (const auto& c : expected.at("cases")) {
      if (!c.contains("tokens") || !c.contains("text_utf8_lossy")) continue;
      IncrementalDecoder dec(tok);
      std::string text;
      for (int32_t id : c.at("tokens").get<std::vector<int32_t>>()) text += dec.Push(id);
      text += dec.Flush();
      EXPECT_EQ(ToValidUtf8(text), c.at("text_utf8_lossy").get<std::string>()) << c.at("name");
      ++cases;
    }
  });
  EXPECT_GT(cases, 0);
}

TEST(TokenizerFixtures, ModelPromptTokens) {
  const fs::path prompts_path = kFixtures / "expected" / "prompts.json";
  const fs::path models = kFixtures / "models";
  if (!fs::exists(prompts_path) || !fs::is_directory(models))
    GTEST_SKIP() << "needs ../shared/fixtures/models (absent)";
  const auto prompts = nlohmann::json::parse(ReadAll(prompts_path));
  int cases = 0;
  ForEachFixtureModel(models, [&](const Tokenizer& tok, const nlohmann::json& expected) {
    for (const auto& c : expected.at("cases")) {
      const std::string name = c.at("name").get<std::string>();
      std::string prompt;
      bool found = false;
      for (const auto& p : prompts) {
        if (p.at("name").get<std::string>() == name) {
          prompt = p.at("prompt").get<std::string>();
          found = true;
        }
      }
      EXPECT_TRUE(found) << "no prompt named " << name;
      if (!found) continue;
      const auto want = c.at("prompt_tokens").get<std::vector<int32_t>>();
      EXPECT_EQ(tok.Encode(prompt, /*add_special=*/true, /*parse_special=*/true), want) << name;
      ++cases;
    }
  });
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace pg
