#include "eval/gsm8k_dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/eval_test_util.h"

namespace pg {
namespace {

TEST(Gsm8kDataset, ParsesRowsAndReferences) {
  Result<Gsm8kDataset> ds = Gsm8kDataset::Parse(testing_util::SyntheticJsonl(5) + "\n  \n", "mem");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ(ds->size(), 5u);
  EXPECT_EQ(ds->rows()[3].index, 3);
  EXPECT_EQ(ds->rows()[3].question, testing_util::SyntheticQuestion(3));
  EXPECT_EQ(ds->rows()[3].reference.text, "8");
  EXPECT_EQ(ds->rows()[3].reference.value, 8);
}

TEST(Gsm8kDataset, MalformedRowsNameTheLine) {
  struct Bad {
    std::string text;
    std::string message_part;
  };
  const std::string good = "{\"question\": \"q\", \"answer\": \"a\\n#### 1\"}\n";
  const Bad bad[] = {
      {good + "{not json\n", "mem:2: not valid JSON"},
      {good + "\n[1,2]\n", "mem:3: not a JSON object"},
      {"{\"answer\": \"#### 1\"}\n", "mem:1: missing string field \"question\""},
      {"{\"question\": \"q\", \"answer\": 5}\n", "mem:1: missing string field \"answer\""},
      {"{\"question\": \"q\", \"answer\": \"no marker 5\"}\n", "does not end with \"#### N\""},
      {"{\"question\": \"\", \"answer\": \"#### 5\"}\n", "empty \"question\""},
      {"\n\n", "dataset has no rows"},
      {"{\"question\": \"q\", \"answer\": \"#### 1" + std::string(400, '0') + "\"}\n", "too large"},
  };
  for (const Bad& b : bad) {
    Result<Gsm8kDataset> ds = Gsm8kDataset::Parse(b.text, "mem");
    ASSERT_FALSE(ds.ok()) << b.text;
    EXPECT_NE(ds.status().message().find(b.message_part), std::string::npos) << ds.status().message();
    EXPECT_EQ(ds.status().message().find('\n'), std::string::npos);
  }
}

TEST(Gsm8kDataset, MissingFileIsAnError) {
  Result<Gsm8kDataset> ds = Gsm8kDataset::Load("/nonexistent/gsm8k.jsonl");
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(ds.status().message().find("/nonexistent/gsm8k.jsonl"), std::string::npos);
}

TEST(Gsm8kDataset, CleanSolutionStripsAnnotations) {
  Result<Gsm8kDataset> ds = Gsm8kDataset::Parse(
      "{\"question\": \"q\", \"answer\": \"Half is 48/2=<<48/2=24>>24.\\nTotal $<<24+1=25>>25.\\n#### 25\"}\n", "mem");
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(CleanSolution(ds->rows()[0]), "Half is 48/2=24.\nTotal $25.\nThe answer is 25.");
}

TEST(Gsm8kDataset, LoadsSharedGsm8k) {
  std::string path = std::string(PROSGROW_SHARED_DIR) + "/data/gsm8k/test-first200.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "needs ../shared/data: " << path << " absent";
  Result<Gsm8kDataset> ds = Gsm8kDataset::Load(path);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->size(), 200u);
  EXPECT_EQ(ds->rows()[0].reference.text, "18");     // Janet's ducks
  EXPECT_EQ(ds->rows()[2].reference.text, "70000");  // house flipping
  for (const Gsm8kRow& row : ds->rows()) {
    std::string clean = CleanSolution(row);
    EXPECT_EQ(clean.find("<<"), std::string::npos) << row.index;
    EXPECT_EQ(clean.find("####"), std::string::npos) << row.index;
    // The cleaned solution grades as correct against its own reference.
    auto got = ExtractAnswer(clean);
    ASSERT_TRUE(got.has_value()) << row.index;
    EXPECT_TRUE(AnswersEqual(got->number.value, row.reference.value)) << row.index;
  }
}

}  // namespace
}  // namespace pg
