// prosgrow's pre-tokenizer scanners against llama.cpp's own method: its
// regex lists (llama-vocab.cpp) run through std::regex exactly as its
// unicode_regex_split does: ASCII kept, other code points collapsed to one
// stand-in byte per category (non-ASCII whitespace to U+000B), \p{..}
// rewritten to stand-in + ASCII list, regexes without \p{..} run as wregex on
// the code points; matches and the gaps between them both become pieces.
// The texts are those of testdata/pre_tokenizer_vectors.json.
//
// llama.cpp's hand-written scanners (GPT-2, Llama 3) implement the regex run
// here; Kimi K2's and afmoe's scanners have no regex form and are covered by
// the vectors test only.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

const std::string kC = R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))";
const std::string kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const std::string kTail = R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kLlama3 = kC + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*)" + kTail;
const std::string kQwen2 = kC + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*)" + kTail;
const std::string kDsv3Head =
    R"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)";
const std::string kCjk = "[一-龥぀-ゟ゠-ヿ]+";
const std::string kUp = R"(((?=[\p{L}])([^a-z])))", kLo = R"(((?=[\p{L}])([^A-Z])))";
const std::string kUpM = R"(((?=[\p{L}\p{M}])([^a-z])))", kLoM = R"(((?=[\p{L}\p{M}])([^A-Z])))";
const std::string kBlindUp = R"([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])", kBlindLo = R"([\p{Ll}\p{Lm}\p{Lo}\p{M}])";
const std::string kLead = R"([^\r\n\p{L}\p{N}]?)";
const std::string kPoro = " ?[^(\\s|.,!?…。，、।۔،)]+";

// [^\r\n\p{L}\p{N}]?UP*LO+C|[^\r\n\p{L}\p{N}]?UP+LO*C|\p{N}DIGITS| ?[^\s\p{L}\p{N}]+[\r\n/]*|...
std::string Cased(const std::string& up, const std::string& lo, const std::string& c, const std::string& digits) {
  return kLead + up + "*" + lo + "+" + c + "|" + kLead + up + "+" + lo + "*" + c + R"(|\p{N})" + digits +
         R"(| ?[^\s\p{L}\p{N}]+[\r\n/]*)" + kTail;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& Lists() {
  static const auto* lists = new std::vector<std::pair<std::string, std::vector<std::string>>>{
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
      {"gpt-2", {kGpt2}},
      {"starcoder", {R"(\p{N})", kGpt2}},
      {"llama-bpe", {kLlama3}},
      {"jais-2",
       {kC + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+)"
             R"(|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S))"
             R"(|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})"}},
      {"qwen2", {kQwen2}},
      {"bailingmoe",
       {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
        R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {"qwen35", {kC + R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*)" + kTail}},
      {"seed-coder", {kC + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+)" + kTail}},
      {"ufakzeka", {R"([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*)" + kTail}},
      {"laguna", {R"([^\n]+|[\n]+)", kQwen2}},
      {"minicpm5", {R"(\p{N}{1,3})", kC + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*)" + kTail}},
      {"deepseek-coder", {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", "[一-龥ࠀ-一가-퟿]+", R"(\p{N})"}},
      {"deepseek-v3", {R"(\p{N}{1,3})", kCjk, kDsv3Head + R"(| ?[\p{P}\p{S}]+[\r\n]*)" + kTail}},
      {"spark2_5", {R"(\p{N}{1,3})", kCjk, kDsv3Head + R"(| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)", R"(\p{N})"}},
      {"falcon", {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
      {"gpt-4o", {Cased(kUp, kLo, kC + "?", "{1,3}")}},
      {"granite-embed-multi-97m", {Cased(kUpM, kLoM, kC + "?", "{1,3}")}},
      {"tekken", {Cased(kUp, kLo, "", "")}},
      {"youtu",
       {"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
        Cased(kBlindUp, kBlindLo, kC + "?", "")}},
      {"tiny_aya", {R"(\d{1,3}(?=(?:\d{3})*\b))", Cased(kBlindUp, kBlindLo, kC + "?", "{1,3}")}},
      {"exaone-moe",
       {kC + R"(|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?)"
             R"(|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {"poro-chat", {kPoro}},
      {"viking", {kPoro, R"(\p{N})"}},
      {"superbpe", {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"}},
      {"chameleon",
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", R"(\p{N})",
        R"([\p{P}!-/:-@\[-`{-~])", kGpt2}},
  };
  return *lists;
}

// llama.cpp's collapsed regex: \p{X} -> stand-in byte + ASCII members.
std::string CollapseRegex(const std::string& rx) {
  static const std::pair<const char*, const char*> kClasses[] = {{"\\p{N}",
                                                                  "\xD1"
                                                                  "0-9"},
                                                                 {"\\p{L}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{Lu}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{Ll}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{Lt}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{Lm}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{Lo}",
                                                                  "\xD2"
                                                                  "A-Za-z"},
                                                                 {"\\p{P}",
                                                                  "\xD3"
                                                                  "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
                                                                 {"\\p{M}", "\xD4"},
                                                                 {"\\p{S}",
                                                                  "\xD5"
                                                                  "\\$\\+<->\\^`\\|"}};
  std::string out;
  bool inside = false;
  for (size_t i = 0; i < rx.size(); ++i) {
    if (rx[i] == '[' && (i == 0 || rx[i - 1] != '\\')) inside = true;
    if (inside && rx[i] == ']' && rx[i - 1] != '\\') inside = false;
    bool replaced = false;
    for (const auto& [pat, body] : kClasses) {
      if (rx.compare(i, std::strlen(pat), pat) != 0) continue;
      if (!inside) out += '[';
      out += body;
      if (!inside) out += ']';
      i += std::strlen(pat) - 1;
      replaced = true;
      break;
    }
    if (!replaced) out += rx[i];
  }
  return out;
}

// regex_iterator over every piece: matches and gaps (empty matches dropped).
template <typename Char>
std::vector<size_t> SplitStl(const std::basic_string<Char>& text, const std::basic_regex<Char>& re,
                             const std::vector<size_t>& pieces) {
  std::vector<size_t> out;
  size_t start = 0;
  for (size_t len : pieces) {
    std::regex_iterator<const Char*> it(text.data() + start, text.data() + start + len, re), end;
    size_t last = 0;
    for (; it != end; ++it) {
      const size_t pos = static_cast<size_t>(it->position()), n = static_cast<size_t>(it->length());
      if (pos > last) out.push_back(pos - last);
      if (n > 0) out.push_back(n);
      last = pos + n;
    }
    if (last < len) out.push_back(len - last);
    start += len;
  }
  return out;
}

std::vector<size_t> LlamaCppSplit(const std::vector<std::string>& regexes, const std::vector<uint32_t>& cpts) {
  std::string collapsed(cpts.size(), '\0');
  std::wstring wide(cpts.begin(), cpts.end());
  for (size_t i = 0; i < cpts.size(); ++i) {
    const uint32_t c = cpts[i];
    const bool ws = c > 0x7F && IsWhitespace(c);
    if (ws) wide[i] = 0x0B;
    static const char kStandIn[] = {'\xD0', '\xD2', '\xD1', '\xD4', '\xD3', '\xD5', '\xD0', '\xD0'};
    collapsed[i] = c < 0x80 ? static_cast<char>(c) : ws ? '\x0B' : kStandIn[static_cast<int>(CategoryOf(c))];
  }
  std::vector<size_t> pieces;
  if (!cpts.empty()) pieces.push_back(cpts.size());
  constexpr auto kFlags = std::regex_constants::optimize | std::regex_constants::nosubs;
  for (const std::string& rx : regexes) {
    if (rx.find("\\p{") != std::string::npos) {
      pieces = SplitStl(collapsed, std::regex(CollapseRegex(rx), kFlags), pieces);
    } else {
      const auto rx_cpts = DecodeUtf8(rx);
      pieces = SplitStl(wide, std::wregex(std::wstring(rx_cpts.begin(), rx_cpts.end()), kFlags), pieces);
    }
  }
  return pieces;
}

TEST(PreTokenizerStl, MatchLlamaCppRegexesRunThroughStdRegex) {
#if !defined(__GLIBCXX__)
  GTEST_SKIP() << "llama.cpp's reference results are those of libstdc++'s std::regex";
#endif
  std::ifstream f(fs::path(PROSGROW_SOURCE_DIR) / "src/tokenizer/testdata/pre_tokenizer_vectors.json");
  ASSERT_TRUE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  const auto texts = nlohmann::json::parse(ss.str()).at("texts").get<std::vector<std::string>>();
  for (const auto& [name, regexes] : Lists()) {
    auto spec = PreTokenizerFromName(name);
    ASSERT_TRUE(spec.ok()) << name;
    int mismatches = 0;
    for (const std::string& text : texts) {
      const auto cpts = DecodeUtf8(text);
      // libstdc++ evaluates \b at the start of a lookahead without the code
      // point before it when the match is tried at the very start of the
      // text, so for a text opening with digits llama.cpp groups tiny_aya's
      // digits from the left. prosgrow follows the regex (groups from the
      // right, as Hugging Face does); see docs/quality.md.
      if (name == "tiny_aya" && !cpts.empty() && cpts[0] >= '0' && cpts[0] <= '9') continue;
      if (PreTokenize(spec->kind, cpts) != LlamaCppSplit(regexes, cpts) && ++mismatches <= 3) {
        ADD_FAILURE() << name << ": " << text;
      }
    }
    EXPECT_EQ(mismatches, 0) << name;
  }
}

}  // namespace
}  // namespace pg
