#include "eval/prompt_builder.h"

#include <gtest/gtest.h>

#include <set>

#include "base/check.h"
#include "eval/eval_test_util.h"

namespace pg {
namespace {

Gsm8kDataset MakeDataset(int n) {
  Result<Gsm8kDataset> ds = Gsm8kDataset::Parse(testing_util::SyntheticJsonl(n), "mem");
  PG_CHECK(ds.ok());
  return std::move(ds).value();
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

TEST(PromptBuilder, ShortPromptIsZeroShot) {
  Gsm8kDataset ds = MakeDataset(3);
  Result<PromptBuilder> b = PromptBuilder::Create(&ds, /*need_long=*/false);
  ASSERT_TRUE(b.ok());
  std::string p = b->Build(PromptStyle::kShort, ds.rows()[1]);
  EXPECT_NE(p.find("The answer is N."), std::string::npos);
  EXPECT_NE(p.find("Question: " + ds.rows()[1].question + "\nAnswer:"), std::string::npos);
  EXPECT_EQ(p.find(ds.rows()[0].question), std::string::npos);
  EXPECT_EQ(p.find("Answer:"), p.rfind("Answer:"));  // no worked example
}

TEST(PromptBuilder, LongNeedsNineRows) {
  Gsm8kDataset ds = MakeDataset(8);
  Result<PromptBuilder> b = PromptBuilder::Create(&ds, /*need_long=*/true);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("at least 9 rows"), std::string::npos);
  EXPECT_TRUE(PromptBuilder::Create(&ds, /*need_long=*/false).ok());
}

TEST(PromptBuilder, LongPrefixNeverHoldsTheQuestionAndIsShared) {
  const int n = 30;
  Gsm8kDataset ds = MakeDataset(n);
  Result<PromptBuilder> b = PromptBuilder::Create(&ds, /*need_long=*/true);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->primary_exemplars().size(), 8u);
  EXPECT_EQ(b->primary_exemplars().front(), n - 9);
  EXPECT_EQ(b->primary_exemplars().back(), n - 2);

  // The shared prefix: everything of a non-exemplar question's prompt before its own question.
  std::string p0 = b->Build(PromptStyle::kLong, ds.rows()[0]);
  std::string tail0 = "Question: " + ds.rows()[0].question + "\nAnswer:";
  ASSERT_EQ(p0.size() - tail0.size(), p0.rfind(tail0));
  std::string prefix = p0.substr(0, p0.size() - tail0.size());
  for (int e : b->primary_exemplars()) {
    EXPECT_NE(prefix.find(ds.rows()[e].question), std::string::npos) << e;
    EXPECT_NE(prefix.find("The answer is " + std::to_string(testing_util::SyntheticAnswer(e)) + "."),
              std::string::npos);
  }
  EXPECT_EQ(prefix.find("<<"), std::string::npos);
  EXPECT_EQ(prefix.find("####"), std::string::npos);

  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    const Gsm8kRow& row = ds.rows()[i];
    std::string p = b->Build(PromptStyle::kLong, row);
    std::string tail = "Question: " + row.question + "\nAnswer:";
    // The question appears exactly once: as the final question.
    ASSERT_EQ(p.find(row.question), p.size() - tail.size() + 10);
    std::vector<int> ex = b->ExemplarsFor(row);
    EXPECT_EQ(ex.size(), 8u);
    EXPECT_EQ(std::set<int>(ex.begin(), ex.end()).size(), 8u);
    bool is_exemplar = i >= n - 9 && i <= n - 2;
    if (!is_exemplar) {
      EXPECT_EQ(p.substr(0, prefix.size()), prefix);  // byte-identical shared prefix
    } else {
      // Replaced in place: the prompt shares the prefix up to the replaced slot.
      int slot = i - (n - 9);
      EXPECT_EQ(ex[slot], n - 1);
      for (int k = 0; k < 8; ++k) {
        if (k != slot) {
          EXPECT_EQ(ex[k], b->primary_exemplars()[k]);
        }
      }
      std::string before_slot = "Question: " + ds.rows()[i].question;
      EXPECT_GE(CommonPrefix(p, prefix), prefix.find(before_slot));
    }
    // Deterministic.
    EXPECT_EQ(p, b->Build(PromptStyle::kLong, row));
  }
}

TEST(PromptBuilder, DuplicateQuestionsAreNeverTheirOwnExample) {
  // Rows 20..28 are the exemplars + spare for n = 30; make row 0 repeat the text of row 25.
  std::string jsonl = testing_util::SyntheticJsonl(30);
  Result<Gsm8kDataset> ds0 = Gsm8kDataset::Parse(jsonl, "mem");
  ASSERT_TRUE(ds0.ok());
  std::string q25 = ds0->rows()[25].question;
  std::string q0 = ds0->rows()[0].question;
  jsonl.replace(jsonl.find(q0), q0.size(), q25);
  Result<Gsm8kDataset> ds = Gsm8kDataset::Parse(jsonl, "mem");
  ASSERT_TRUE(ds.ok());
  Result<PromptBuilder> b = PromptBuilder::Create(&*ds, true);
  ASSERT_TRUE(b.ok());
  for (int i : {0, 25}) {
    std::string p = b->Build(PromptStyle::kLong, ds->rows()[i]);
    EXPECT_EQ(p.find(q25), p.rfind(q25)) << i;
    for (int e : b->ExemplarsFor(ds->rows()[i])) EXPECT_NE(ds->rows()[e].question, q25) << i;
  }
}

TEST(PromptBuilder, StyleNames) {
  EXPECT_EQ(*ParsePromptStyle("short"), PromptStyle::kShort);
  EXPECT_EQ(*ParsePromptStyle("long"), PromptStyle::kLong);
  EXPECT_FALSE(ParsePromptStyle("medium").ok());
}

}  // namespace
}  // namespace pg
