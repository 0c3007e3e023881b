// The prosgrow binary as a user runs it: subcommand help, bad arguments,
// corrupt model files (exit 2, one line), tokenize and generate --json on the
// fixtures.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf_corpus.h"
#include "test_util.h"

namespace pg {
namespace {

using test::RunProsgrow;

TEST(Cli, EverySubcommandHasHelpAndRejectsBadArguments) {
  for (const char* cmd : {"generate", "tokenize", "make-model", "bench-model", "serve", "bench", "eval"}) {
    auto help = RunProsgrow(std::string(cmd) + " --help");
    EXPECT_EQ(help.exit_code, 0) << cmd << ": " << help.err;
    EXPECT_NE(help.out.find("--"), std::string::npos) << cmd;
    auto bad = RunProsgrow(std::string(cmd) + " --no-such-flag");
    EXPECT_EQ(bad.exit_code, 2) << cmd;
    EXPECT_FALSE(bad.err.empty()) << cmd;
  }
  EXPECT_EQ(RunProsgrow("no-such-command").exit_code, 2);
  EXPECT_EQ(RunProsgrow("").exit_code, 2);
}

TEST(Cli, CorruptModelFilesFailWithOneLine) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pg_corrupt_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteCorruptCorpus(dir.string()).ok());
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    for (const char* cmd : {"generate -p hi -n 1", "tokenize -p hi"}) {
      auto r = RunProsgrow(std::string(cmd) + " -m " + e.path().string());
      EXPECT_EQ(r.exit_code, 2) << e.path() << " " << r.err;
      ASSERT_FALSE(r.err.empty()) << e.path();
      // Exactly one line on stderr.
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << e.path() << ": " << r.err;
    }
    ++n;
  }
  EXPECT_GT(n, 10);
  auto missing = RunProsgrow("generate -p hi -m /nonexistent/model.gguf");
  EXPECT_EQ(missing.exit_code, 2);
  fs::remove_all(dir);
}

TEST(Cli, TokenizeAndGenerateJsonMatchTheOracle) {
  if (!test::HaveFixtures()) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const std::string model = test::Fixture("models/tiny-qwen3-spm.gguf");
  nlohmann::json expected =
      nlohmann::json::parse(std::ifstream(test::Fixture("expected/expected-tiny-qwen3-spm.json")));
  const auto& cs = expected["cases"][0];
  const std::string prompt = cs["prompt"].get<std::string>();
  auto tok = RunProsgrow("tokenize -m " + model + " -p '" + prompt + "'");
  ASSERT_EQ(tok.exit_code, 0) << tok.err;
  EXPECT_EQ(nlohmann::json::parse(tok.out), cs["prompt_tokens"]);
  auto gen = RunProsgrow("generate -m " + model + " -p '" + prompt + "' -n 8 --temp 0 --ignore-eos --json");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  nlohmann::json j = nlohmann::json::parse(gen.out);
  EXPECT_EQ(j["prompt_tokens"], cs["prompt_tokens"]);
  ASSERT_EQ(j["tokens"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(j["tokens"][i], cs["tokens"][i]) << i;
  ASSERT_EQ(j["top_logprobs"].size(), 8u);
  EXPECT_EQ(j["top_logprobs"][0].size(), 10u);
  // The run above used the default attention (--attn fast); llama.cpp's f16
  // arithmetic keeps this case's greedy tokens too.
  auto llama =
      RunProsgrow("generate -m " + model + " -p '" + prompt + "' -n 8 --temp 0 --ignore-eos --json --attn llama");
  ASSERT_EQ(llama.exit_code, 0) << llama.err;
  nlohmann::json jl = nlohmann::json::parse(llama.out);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(jl["tokens"][i], cs["tokens"][i]) << i;
}

// bench-model -d N (llama-bench's --n-depth): the tests start N tokens into
// every sequence's context and are named as llama-bench names them; a depth
// past the model's context is refused in one line.
TEST(Cli, BenchModelDepthRunsEachTestPastAContext) {
  namespace fs = std::filesystem;
  const fs::path model = fs::temp_directory_path() / ("pg_depth_" + std::to_string(::getpid()) + ".gguf");
  auto made =
      RunProsgrow("make-model --shape tiny-moe --arch qwen3moe --type q8_0 --vocab builtin --out " + model.string());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto r = RunProsgrow("bench-model -m " + model.string() + " -t 2 -r 1 -p 8 -n 4 -d 40 --tests pp,tg,bd4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& row : j["results"]) {
    names.push_back(row["test"].get<std::string>());
    EXPECT_GT(row["tokens_per_s"].get<double>(), 0.0) << row.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pp8 @ d40", "tg4 @ d40", "bd4x4 @ d40"}));
  auto deep = RunProsgrow("bench-model -m " + model.string() + " -r 1 -p 8 -n 4 -d 1000000 --tests tg");
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_NE(deep.err.find("context"), std::string::npos) << deep.err;
  EXPECT_EQ(deep.err.find('\n'), deep.err.size() - 1) << deep.err;
  fs::remove(model);
}

TEST(Cli, AttnFlagRejectsUnknownModes) {
  for (const char* cmd : {"generate -p hi -n 1", "serve"}) {
    auto bad = RunProsgrow(std::string(cmd) + " --attn slow");
    EXPECT_EQ(bad.exit_code, 2) << cmd;
    EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << cmd << ": " << bad.err;
  }
}

TEST(Cli, PrefillSliceFlagsAreCheckedAndNeedTheOptimizedPolicy) {
  for (const char* args : {"--prefill-slice -1", "--long-prefill-threshold 0", "--policy baseline --prefill-slice 16",
                           "--policy baseline --long-prefill-threshold 300"}) {
    auto bad = RunProsgrow(std::string("generate -p hi -n 1 ") + args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << args << ": " << bad.err;
  }
  auto ok = RunProsgrow("generate -p hi -n 2 --temp 0 --prefill-slice 8 --long-prefill-threshold 4");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto plain = RunProsgrow("generate -p hi -n 2 --temp 0 --prefill-slice 0");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(ok.out, plain.out);
}

}  // namespace
}  // namespace pg
