// tokenizer.json tokenization against Hugging Face `tokenizers` itself (the
// Rust library through its Node binding, tests/node/hf_tokenize_reference.mjs)
// on the four real tokenizers of tests/node's @lenml packages (Qwen3,
// Llama 3.1, DeepSeek-V3, GPT-OSS) and on tokenizer.json files written here
// to reach the components those four do not use (SentencePiece-style BPE,
// Metaspace, byte fallback, unknown tokens, added-token flags, NFKC, Digits,
// Split behaviours). The corpus: the fixtures' prompts, chat renderings and
// tokenizer test strings, GSM8K questions, code, emoji, CJK and invalid
// UTF-8. Every string must match: ids with and without special tokens, and
// the decoded text with special tokens skipped and kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tokenizer/hf_pipeline.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/hf_tokenizer_test_util.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path NodeDir() { return fs::path(PROSGROW_SOURCE_DIR) / "tests" / "node"; }
fs::path LenmlModel(const std::string& pkg) {
  return NodeDir() / "node_modules" / "@lenml" / ("tokenizer-" + pkg) / "models" / "tokenizer.json";
}

struct Reference {
  ~Reference() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
  fs::path dir;  // the written tokenizer.json files, the corpus and the reference's output
  std::string skip_reason;
  std::vector<std::string> corpus;
  std::map<std::string, fs::path> files;  // name -> tokenizer.json
  json rows;                              // path -> per-string results
};

void BuildReference(Reference* ref) {
  if (std::system("command -v node >/dev/null 2>&1") != 0) {
    ref->skip_reason = "node is not installed";
    return;
  }
  if (!fs::exists(NodeDir() / "node_modules" / "@anush008" / "tokenizers")) {
    ref->skip_reason = "tests/node has no node_modules (run npm ci there)";
    return;
  }
  ref->corpus = testutil::HfCorpus();
  ref->dir = fs::temp_directory_path() / ("pg_hf_ref_" + std::to_string(::getpid()));
  const fs::path& dir = ref->dir;
  fs::create_directories(dir);
  for (const char* pkg : {"qwen3", "llama3_1", "deepseek_v3", "gptoss"}) ref->files[pkg] = LenmlModel(pkg);
  ref->files["spm_prepend"] = dir / "spm_prepend.json";
  ref->files["spm_metaspace"] = dir / "spm_metaspace.json";
  std::ofstream(ref->files["spm_prepend"]) << testutil::SpmStyleTokenizerJson(false).dump();
  std::ofstream(ref->files["spm_metaspace"]) << testutil::SpmStyleTokenizerJson(true).dump();
  const fs::path gpt2 = fs::path(PROSGROW_SHARED_DIR) / "fixtures" / "vocab" / "ggml-vocab-gpt-2.gguf";
  if (fs::exists(gpt2)) {
    auto j = testutil::ByteLevelTokenizerJsonFromGguf(gpt2.string());
    if (j.ok()) {
      ref->files["gpt2_variants"] = dir / "gpt2_variants.json";
      std::ofstream(ref->files["gpt2_variants"]) << j->dump();
    }
  }
  json hex = json::array();
  for (const std::string& s : ref->corpus) hex.push_back(testutil::Hex(s));
  std::ofstream(dir / "corpus.json") << hex.dump();
  std::string cmd = "node '" + (NodeDir() / "hf_tokenize_reference.mjs").string() + "' '" +
                    (dir / "corpus.json").string() + "' '" + (dir / "out.json").string() + "'";
  for (const auto& [name, path] : ref->files) cmd += " '" + path.string() + "'";
  if (std::system(cmd.c_str()) != 0) return;  // rows stays null: the test fails
  std::ifstream in(dir / "out.json");
  ref->rows = json::parse(in, nullptr, false);
}

// Compares one tokenizer with its reference rows; returns the mismatches.
int CompareOne(const Reference& ref, const std::string& name, const fs::path& path) {
  SCOPED_TRACE(name);
  if (!ref.rows.contains(path.string())) {
    ADD_FAILURE() << "no reference output for " << path;
    return 1;
  }
  const json& rows = ref.rows[path.string()];
  if (rows.size() != ref.corpus.size()) {
    ADD_FAILURE() << rows.size() << " reference rows for " << ref.corpus.size() << " strings";
    return 1;
  }
  auto tok = LoadTokenizerJson(path.string());
  if (!tok.ok()) {
    ADD_FAILURE() << tok.status().ToString();
    return 1;
  }
  int mismatches = 0;
  for (size_t i = 0; i < ref.corpus.size(); ++i) {
    const std::string& s = ref.corpus[i];
    const json& r = rows[i];
    const auto ids = (*tok)->Encode(s, /*add_special=*/true, /*parse_special=*/true);
    const auto plain = (*tok)->Encode(s, /*add_special=*/false, /*parse_special=*/true);
    const std::string text = ToValidUtf8((*tok)->Decode(r["ids"].get<std::vector<int32_t>>(), false));
    const std::string text_special = ToValidUtf8((*tok)->Decode(r["ids"].get<std::vector<int32_t>>(), true));
    const bool ok = ids == r["ids"].get<std::vector<int32_t>>() &&
                    plain == r["ids_plain"].get<std::vector<int32_t>>() && text == r["text"].get<std::string>() &&
                    text_special == r["text_special"].get<std::string>();
    if (!ok && ++mismatches <= 5) {
      ADD_FAILURE() << name << " string " << i << " (hex " << testutil::Hex(s).substr(0, 120) << ")\n"
                    << "  ids  " << json(ids).dump() << "\n  hf   " << r["ids"].dump() << "\n  plain "
                    << json(plain).dump() << "\n  hf   " << r["ids_plain"].dump() << "\n  text " << json(text).dump()
                    << "\n  hf   " << r["text"].dump() << "\n  text+special " << json(text_special).dump()
                    << "\n  hf   " << r["text_special"].dump();
    }
  }
  return mismatches;
}

// One test (the reference runs once for all the files): every tokenizer,
// every string.
TEST(HfTokenizerReferenceTest, EveryStringOfEveryTokenizerMatchesHuggingFace) {
  Reference ref;
  BuildReference(&ref);
  if (!ref.skip_reason.empty()) GTEST_SKIP() << ref.skip_reason;
  ASSERT_TRUE(ref.rows.is_object()) << "the Node reference (tests/node/hf_tokenize_reference.mjs) failed";
  ASSERT_EQ(ref.files.size(), 7u) << "a tokenizer.json source is missing";
  for (const auto& [name, path] : ref.files) {
    const int mismatches = CompareOne(ref, name, path);
    EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " of " << ref.corpus.size() << " strings differ";
    std::printf("%s: %zu strings, %d differ\n", name.c_str(), ref.corpus.size(), mismatches);
  }
}

}  // namespace
}  // namespace pg
