// constrain_bench: the cost of constrained decoding's token masks (src/constrain)
// per generated token, on real tokenizers. Prints figures, asserts nothing.
//
//   constrain_bench VOCAB.gguf [VOCAB2.gguf ...] [--union [--pad-to N]]
//
// For each tokenizer: build the vocabulary trie once, compile a JSON schema,
// then follow the tokens of a valid answer (the tokenizer's own encoding of
// it) and at every step time
//   cold   CompiledConstraint::ComputeMask (the trie walk, no cache);
//   first  Mask() as the first request with this schema sees it (the cache
//          fills as it goes: states that repeat hit);
//   warm   Mask() for a later request with the same schema (all hits).
// --union adds one more tokenizer: the union of all the given vocabularies'
// token strings (e.g. deepseek-llm's 102k plus gpt-2's 50k gives ~130k+), as a
// stand-in for a ~150k vocabulary when no such file is at hand.
// --pad-to N (with --union) then pads that union to exactly N tokens (151646
// is Qwen2/3's size) with BPE-like merges: each new token is the
// concatenation of two normal tokens already in it, drawn by a fixed-seed
// generator (the same vocabulary on every run), never a duplicate; a token is
// added only as a string (no merge rule), which is all a mask sees. Measured
// as "union padded to N" after the plain union.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "constrain/constraint.h"
#include "constrain/output_grammar.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

const char* kSchema = R"({"type": "object", "properties": {
  "name": {"type": "string"}, "age": {"type": "integer"}, "email": {"type": ["string", "null"]},
  "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"},
              "zip": {"type": "string"}}, "required": ["street", "city"], "additionalProperties": false},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
  "scores": {"type": "array", "items": {"type": "number"}},
  "status": {"enum": ["active", "inactive", "banned"]}, "verified": {"type": "boolean"}},
  "required": ["name", "age", "address", "tags", "status", "verified"], "additionalProperties": false})";

const char* kAnswer = R"({"name": "Margaret Hamilton", "age": 88, "email": null, "address": {"street": )"
                      R"("12 Memory Lane", "city": "Cambridge, Massachusetts"}, "tags": ["apollo", "software", )"
                      R"("engineering", "guidance computer"], "scores": [9.5, 10, 7.25], "status": "active", )"
                      R"("verified": true})";

// "median / p90 / max" in microseconds.
std::string Quantiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))] * 1e6;
  };
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.1f / %.1f / %.1f", at(0.5), at(0.9), v.back() * 1e6);
  return buf;
}

void Measure(const std::string& label, const Tokenizer& tok) {
  double t0 = NowSeconds();
  auto vocab = std::make_shared<const TokenVocabulary>(tok);
  const double vocab_ms = (NowSeconds() - t0) * 1e3;
  t0 = NowSeconds();
  Result<Grammar> g = JsonSchemaGrammar(nlohmann::ordered_json::parse(kSchema), "schema");
  if (!g.ok()) {
    std::printf("%s: %s\n", label.c_str(), g.status().ToString().c_str());
    return;
  }
  const double compile_ms = (NowSeconds() - t0) * 1e3;
  const std::vector<int32_t> ids = tok.Encode(kAnswer, false, false);
  {
    // Warm-up on a throwaway constraint: first-touch page faults and
    // allocator growth are not the masks' cost.
    CompiledConstraint warmup(*g, vocab, "warmup");
    GrammarMatcher m(&warmup.grammar());
    TokenBitmask mask;
    for (int32_t id : ids) {
      warmup.Mask(m, &mask);
      if (!m.AdvanceBytes(vocab->bytes(id))) break;
    }
  }
  CompiledConstraint c(std::move(*g), vocab, "bench");

  std::vector<double> cold, first, warm;  // seconds per token
  size_t allowed_sum = 0;
  TokenBitmask mask;
  for (int pass = 0; pass < 2; ++pass) {
    GrammarMatcher m(&c.grammar());
    for (int32_t id : ids) {
      double s = NowSeconds();
      c.Mask(m, &mask);
      (pass == 0 ? first : warm).push_back(NowSeconds() - s);
      if (pass == 0) {
        TokenBitmask scratch;
        s = NowSeconds();
        c.ComputeMask(m, &scratch);
        cold.push_back(NowSeconds() - s);
        for (uint64_t w : scratch) allowed_sum += static_cast<size_t>(__builtin_popcountll(w));
      }
      if (!MaskHas(mask, id) || !m.AdvanceBytes(vocab->bytes(id))) {
        std::printf("%s: token %d (%s) rejected: the benchmark answer does not fit the schema\n", label.c_str(), id,
                    vocab->bytes(id).c_str());
        return;
      }
    }
  }
  const double n = static_cast<double>(ids.size());
  const CompiledConstraint::CacheStats st = c.cache_stats();
  std::printf(
      "%-28s vocab %7d  trie %7zu nodes  build %6.1f ms  compile %.2f ms  %3zu tokens, %.0f allowed/step\n"
      "    mask per token, us (median / p90 / max):  cold %s  first request %s  warm %s  "
      "(first request: %lld of %zu from the cache)\n",
      label.c_str(), vocab->n_vocab(), vocab->trie().nodes.size(), vocab_ms, compile_ms, ids.size(),
      static_cast<double>(allowed_sum) / n, Quantiles(cold).c_str(), Quantiles(first).c_str(), Quantiles(warm).c_str(),
      static_cast<long long>(st.hits) - static_cast<long long>(ids.size()), ids.size());
}

// Longest token a padding merge may make, in bytes (longer pairs are redrawn).
constexpr size_t kMaxMergeBytes = 24;

// Appends concatenations of two normal tokens of `v` until it holds `n`
// tokens; false when the draws stop finding new strings.
bool PadWithMerges(VocabData* v, std::set<std::string>* seen, size_t n) {
  std::vector<size_t> normal;  // ids of normal tokens (type 1, or all when untyped)
  for (size_t i = 0; i < v->tokens.size(); ++i)
    if (v->token_types.empty() || v->token_types[i] == 1) normal.push_back(i);
  if (normal.empty()) return false;
  std::mt19937_64 rng(151646);  // raw draws only: the same sequence on every platform
  size_t misses = 0;
  while (v->tokens.size() < n) {
    const std::string& a = v->tokens[normal[rng() % normal.size()]];
    const std::string& b = v->tokens[normal[rng() % normal.size()]];
    std::string merged = a + b;
    if (merged.size() > kMaxMergeBytes || !seen->insert(merged).second) {
      if (++misses > 100 * n) return false;
      continue;
    }
    v->tokens.push_back(std::move(merged));
    if (!v->scores.empty()) v->scores.push_back(0.0f);
    if (!v->token_types.empty()) v->token_types.push_back(1);
  }
  return true;
}

int Main(int argc, char** argv) {
  std::vector<std::string> paths;
  bool make_union = false;
  size_t pad_to = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--union") {
      make_union = true;
    } else if (a == "--pad-to") {
      char* end = nullptr;
      const long long n = i + 1 < argc ? std::strtoll(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end != '\0' || n <= 0 || n > 4000000) {
        std::fprintf(stderr, "constrain_bench: --pad-to needs a token count in [1, 4000000]\n");
        return 2;
      }
      pad_to = static_cast<size_t>(n);
      ++i;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty() || (pad_to > 0 && !make_union)) {
    std::fprintf(stderr, "usage: constrain_bench VOCAB.gguf [VOCAB2.gguf ...] [--union [--pad-to N]]\n");
    return 2;
  }
  VocabData merged;
  std::set<std::string> seen;
  for (const std::string& p : paths) {
    auto file = GgufFile::Open(p);
    if (!file.ok()) {
      std::fprintf(stderr, "%s: %s\n", p.c_str(), file.status().ToString().c_str());
      return 2;
    }
    auto tok = Tokenizer::FromGguf(**file);
    if (!tok.ok()) {
      std::fprintf(stderr, "%s: %s\n", p.c_str(), tok.status().ToString().c_str());
      return 2;
    }
    Measure(p.substr(p.find_last_of('/') + 1), **tok);
    if (!make_union) continue;
    auto v = Tokenizer::ReadVocab(**file);
    if (!v.ok()) continue;
    if (merged.tokens.empty()) {
      merged = *v;  // the first file's model, merges and special ids
      seen.insert(merged.tokens.begin(), merged.tokens.end());
      continue;
    }
    if (v->model != merged.model) continue;
    for (size_t i = 0; i < v->tokens.size(); ++i) {
      if (!seen.insert(v->tokens[i]).second) continue;
      merged.tokens.push_back(v->tokens[i]);
      if (!merged.scores.empty()) merged.scores.push_back(0.0f);
      if (!merged.token_types.empty()) merged.token_types.push_back(1);
    }
  }
  if (make_union && !merged.tokens.empty()) {
    auto tok = Tokenizer::FromVocab(merged);
    if (!tok.ok()) {
      std::fprintf(stderr, "union: %s\n", tok.status().ToString().c_str());
      return 2;
    }
    Measure("union of the above", **tok);
    if (pad_to > 0) {
      if (merged.tokens.size() > pad_to) {
        std::fprintf(stderr, "constrain_bench: the union already holds %zu tokens, more than --pad-to %zu\n",
                     merged.tokens.size(), pad_to);
        return 2;
      }
      if (!PadWithMerges(&merged, &seen, pad_to)) {
        std::fprintf(stderr, "constrain_bench: could not find %zu distinct merges\n", pad_to);
        return 2;
      }
      auto padded = Tokenizer::FromVocab(merged);
      if (!padded.ok()) {
        std::fprintf(stderr, "padded union: %s\n", padded.status().ToString().c_str());
        return 2;
      }
      Measure("union padded to " + std::to_string(pad_to), **padded);
    }
  }
  return 0;
}

}  // namespace
}  // namespace pg

int main(int argc, char** argv) { return pg::Main(argc, argv); }
