#include "eval/eval_compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "eval/eval_cli.h"

namespace pg {
namespace {

// A report whose question i (short style) has verdict verdicts[i] and output outputs[i].
EvalReport MakeReport(const std::string& verdicts, const std::vector<std::string>& outputs,
                      std::vector<PromptStyle> styles = {PromptStyle::kShort}) {
  EvalReport report;
  report.styles = styles;
  report.settings.limit = static_cast<int>(verdicts.size());
  for (PromptStyle style : styles) {
    for (size_t i = 0; i < verdicts.size(); ++i) {
      QuestionResult r;
      r.index = static_cast<int>(i);
      r.style = style;
      r.question = "question " + std::to_string(i);
      r.reference = ExtractedNumber{"1", 1};
      r.output = outputs[i];
      switch (verdicts[i]) {
        case 'C': r.verdict = Verdict::kCorrect; break;
        case 'W': r.verdict = Verdict::kWrong; break;
        case 'N': r.verdict = Verdict::kNoAnswer; break;
        default:
          r.verdict = Verdict::kFailed;
          r.error = "HTTP 500";
          r.output.clear();
      }
      report.results.push_back(std::move(r));
    }
  }
  return report;
}

TEST(EvalCompare, CountsFlipsAndIdenticalOutputs) {
  //                       0    1    2    3    4    5    6
  EvalReport base = MakeReport("CCWCNCW", {"a", "b", "c", "d", "e", "f", "g"});
  EvalReport opt = MakeReport("CWCNCFW", {"a", "B", "C", "D", "E", "", "g"});
  Result<Comparison> cmp = CompareReports(base, opt);
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  ASSERT_EQ(cmp->styles.size(), 1u);
  const StyleComparison& s = cmp->styles[0];
  EXPECT_EQ(s.paired, 7);
  EXPECT_EQ(s.right_to_wrong, (std::vector<int>{1, 3}));  // 3: correct -> no answer
  EXPECT_EQ(s.wrong_to_right, (std::vector<int>{2, 4}));  // 4: no answer -> correct
  EXPECT_EQ(s.unverifiable, (std::vector<int>{5}));
  EXPECT_EQ(s.identical, 2);  // 0 and 6
  EXPECT_NEAR(s.identical_rate(), 2.0 / 7.0, 1e-12);
  EXPECT_EQ(s.base.correct, 4);
  EXPECT_EQ(s.opt.failed, 1);
  EXPECT_TRUE(cmp->HasRegression());
  std::string text = FormatComparison(*cmp, "b.json", "o.json");
  EXPECT_NE(text.find("flips right -> wrong: 2 [1, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("flips wrong -> right: 2 [2, 4]"), std::string::npos) << text;
  EXPECT_NE(text.find("identical outputs: 28.6% (2/7)"), std::string::npos) << text;
}

TEST(EvalCompare, IdenticalRunsHaveNoRegression) {
  EvalReport base = MakeReport("CWNC", {"x", "y", "z", "w"}, {PromptStyle::kShort, PromptStyle::kLong});
  Result<Comparison> cmp = CompareReports(base, base);
  ASSERT_TRUE(cmp.ok());
  ASSERT_EQ(cmp->styles.size(), 2u);
  for (const StyleComparison& s : cmp->styles) {
    EXPECT_EQ(s.identical_rate(), 1.0);
    EXPECT_TRUE(s.right_to_wrong.empty());
    EXPECT_TRUE(s.wrong_to_right.empty());
  }
  EXPECT_FALSE(cmp->HasRegression());
}

TEST(EvalCompare, FailedBaselineIsNotAFlipAndNeverIdentical) {
  EvalReport base = MakeReport("FF", {"", ""});
  EvalReport opt = MakeReport("CF", {"x", ""});
  Result<Comparison> cmp = CompareReports(base, opt);
  ASSERT_TRUE(cmp.ok());
  const StyleComparison& s = cmp->styles[0];
  EXPECT_TRUE(s.wrong_to_right.empty());
  EXPECT_EQ(s.identical, 0);
  EXPECT_FALSE(cmp->HasRegression());
}

TEST(EvalCompare, RejectsDifferentDatasetsAndDisjointStyles) {
  EvalReport base = MakeReport("CC", {"a", "b"});
  EvalReport opt = MakeReport("CC", {"a", "b"});
  opt.results[1].question = "something else";
  Result<Comparison> cmp = CompareReports(base, opt);
  ASSERT_FALSE(cmp.ok());
  EXPECT_NE(cmp.status().message().find("question 1"), std::string::npos);

  EvalReport long_only = MakeReport("CC", {"a", "b"}, {PromptStyle::kLong});
  EXPECT_FALSE(CompareReports(base, long_only).ok());
}

TEST(EvalCompare, WarnsAboutDifferentSettings) {
  EvalReport base = MakeReport("C", {"a"});
  EvalReport opt = MakeReport("C", {"a"});
  opt.settings.max_tokens = 7;
  Result<Comparison> cmp = CompareReports(base, opt);
  ASSERT_TRUE(cmp.ok());
  ASSERT_EQ(cmp->setting_differences.size(), 1u);
  EXPECT_EQ(cmp->setting_differences[0], "max_tokens: BASE 0, OPT 7");
  EXPECT_NE(FormatComparison(*cmp, "b", "o").find("warning: the runs used different settings"), std::string::npos);
  EXPECT_TRUE(CompareReports(base, base)->setting_differences.empty());
}

TEST(EvalCompare, UnpairedQuestionsAreCounted) {
  EvalReport base = MakeReport("CCC", {"a", "b", "c"});
  EvalReport opt = MakeReport("CC", {"a", "b"});
  Result<Comparison> cmp = CompareReports(base, opt);
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->styles[0].paired, 2);
  EXPECT_EQ(cmp->styles[0].only_in_base, 1);
}

TEST(EvalCompare, JsonRoundTrip) {
  EvalReport base = MakeReport("CWNF", {"a\n\"q\"", "b", "c", ""}, {PromptStyle::kShort, PromptStyle::kLong});
  base.results[0].extracted = Extraction{{"1", 1}, ExtractionRule::kAnswerPhrase};
  Result<EvalReport> back = ReportFromJson(ReportToJson(base), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->results.size(), base.results.size());
  EXPECT_EQ(back->styles, base.styles);
  for (size_t i = 0; i < base.results.size(); ++i) {
    EXPECT_EQ(back->results[i].output, base.results[i].output);
    EXPECT_EQ(back->results[i].verdict, base.results[i].verdict);
    EXPECT_EQ(back->results[i].style, base.results[i].style);
    EXPECT_EQ(back->results[i].extracted.has_value(), base.results[i].extracted.has_value());
  }
  EXPECT_FALSE(ReportFromJson(nlohmann::json{{"format", "other"}}, "mem").ok());
  nlohmann::json broken = ReportToJson(base);
  broken["results"][0]["index"] = "zero";
  Result<EvalReport> bad = ReportFromJson(broken, "mem");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mem: malformed results"), std::string::npos);
}

// `prosgrow eval compare` exit codes, through EvalMain.
class CompareCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("eval_compare_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const EvalReport& report) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << ReportToJson(report).dump();
    return path;
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "eval");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return EvalMain(static_cast<int>(argv.size()), argv.data());
  }

  std::filesystem::path dir_;
};

TEST_F(CompareCliTest, FailOnFlipGates) {
  std::string base = Write("base.json", MakeReport("CCW", {"a", "b", "c"}));
  std::string same = Write("same.json", MakeReport("CCW", {"a", "b", "c"}));
  std::string flipped = Write("flip.json", MakeReport("CWC", {"a", "x", "y"}));
  std::string failed = Write("failed.json", MakeReport("FCW", {"", "b", "c"}));
  EXPECT_EQ(Run({"compare", base, same, "--fail-on-flip"}), 0);
  EXPECT_EQ(Run({"compare", base, flipped}), 0);  // no gate: report only
  EXPECT_EQ(Run({"compare", base, flipped, "--fail-on-flip"}), 1);
  EXPECT_EQ(Run({"compare", base, failed, "--fail-on-flip"}), 1);
  // A wrong -> right flip alone passes the gate.
  EXPECT_EQ(Run({"compare", flipped, Write("fix.json", MakeReport("CCC", {"a", "b", "c"})), "--fail-on-flip"}), 0);
  std::string out = (dir_ / "cmp.md").string();
  EXPECT_EQ(Run({"compare", base, same, "--out", out}), 0);
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST_F(CompareCliTest, BadInputsExitTwo) {
  std::string base = Write("base.json", MakeReport("C", {"a"}));
  std::string junk = (dir_ / "junk.json").string();
  std::ofstream(junk) << "{ not json";
  EXPECT_EQ(Run({"compare", base}), 2);
  EXPECT_EQ(Run({"compare", base, (dir_ / "missing.json").string()}), 2);
  EXPECT_EQ(Run({"compare", base, junk}), 2);
  EXPECT_EQ(Run({"compare", base, base, "--bogus"}), 2);
  EXPECT_EQ(Run({"compare", "--help"}), 0);
}

}  // namespace
}  // namespace pg
