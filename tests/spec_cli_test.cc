// Issue 15: the --spec* flags through the prosgrow binary: clear one-line
// errors for bad combinations, synthetic acceptance announced, and greedy
// output unchanged by speculation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "testing/tiny_model.h"

namespace pg {
namespace {

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

std::string Generate(const std::string& extra) {
  return "generate -m " + test::TinyQwen2Model(7) + " -p 'one two three one two three one two' -n 24 --temp 0 " +
         "--threads 2 --json " + extra;
}

TEST(SpecCli, BadCombinationsGetOneLineErrors) {
  struct Case {
    std::string args, needle;
  };
  const Case cases[] = {
      {"--spec eagle", "unknown drafter 'eagle'"},
      {"--spec ngram,ngram", "listed twice"},
      {"--spec ngram --spec-draft-max 4 --spec-synthetic-acceptance-length 6", "outside [1, 5]"},
      {"--spec ngram --spec-synthetic-acceptance-length 0.5", "outside [1, 5]"},
      {"--spec-synthetic-acceptance-length 2", "needs a drafter"},
      {"--spec draft", "--spec-draft-model"},
      {"--spec draft --spec-draft-model /nonexistent.gguf", "--spec-draft-model /nonexistent.gguf: "},
      {"--spec ngram --spec-policy greedy", "unknown policy 'greedy' (goodput | always)"},
  };
  for (const Case& c : cases) {
    auto r = test::RunProsgrow(Generate(c.args));
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << ": " << r.err;
    const size_t at = r.err.find("prosgrow generate:");
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(Lines(r.err.substr(at)), 1) << r.err;
  }
  auto b = test::RunProsgrow("bench-model -m " + test::TinyQwen2Model(7) +
                             " --spec suffix --spec-draft-max 2 --spec-synthetic-acceptance-length 3.5");
  EXPECT_NE(b.exit_code, 0);
  EXPECT_NE(b.err.find("outside [1, 3]"), std::string::npos) << b.err;
}

TEST(SpecCli, GreedyOutputUnchangedAndSyntheticAnnounced) {
  auto off = test::RunProsgrow(Generate("--spec none"));
  auto on = test::RunProsgrow(Generate("--spec ngram,suffix --spec-draft-max 3"));
  ASSERT_EQ(off.exit_code, 0) << off.err;
  ASSERT_EQ(on.exit_code, 0) << on.err;
  auto a = nlohmann::json::parse(off.out), b = nlohmann::json::parse(on.out);
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_EQ(a["top_logprobs"], b["top_logprobs"]);
  EXPECT_FALSE(a.contains("speculative"));
  EXPECT_FALSE(b["speculative"]["synthetic_acceptance"].get<bool>());

  auto syn = test::RunProsgrow(Generate("--spec ngram --spec-draft-max 4 --spec-synthetic-acceptance-length 3"));
  ASSERT_EQ(syn.exit_code, 0) << syn.err;
  auto s = nlohmann::json::parse(syn.out);
  EXPECT_TRUE(s["speculative"]["synthetic_acceptance"].get<bool>());
  EXPECT_GT(s["speculative"]["steps"].get<int64_t>(), 0);
  EXPECT_NE(syn.err.find("SYNTHETIC ACCEPTANCE"), std::string::npos) << syn.err;
}

}  // namespace
}  // namespace pg
