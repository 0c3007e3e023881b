#include "bench/prom_text.h"

#include <gtest/gtest.h>

#include <vector>

namespace pg::bench {
namespace {

TEST(PromText, VisitsLabelledSamplesOnly) {
  const std::string text =
      "# HELP a_total A.\n# TYPE a_total counter\na_total 3\n"
      "b_total{drafter=\"ngram\"} 12\n\nc{tier=\"host\",extra_gib=\"2\"} 0.5\n";
  std::vector<std::string> names;
  std::vector<double> values;
  ForEachLabelledSample(text, [&](const LabelledSample& s) {
    names.emplace_back(s.name);
    values.push_back(s.value);
  });
  EXPECT_EQ(names, (std::vector<std::string>{"b_total", "c"}));
  EXPECT_EQ(values, (std::vector<double>{12, 0.5}));
}

TEST(PromText, LabelValue) {
  const std::string line = "c{tier=\"host\",extra_gib=\"2\"} 0.5";
  EXPECT_EQ(LabelValue(line, "tier"), "host");
  EXPECT_EQ(LabelValue(line, "extra_gib"), "2");
  EXPECT_EQ(LabelValue(line, "reason"), "");
  EXPECT_EQ(LabelValue("c{tier=\"unterminated} 1", "tier"), "");
}

}  // namespace
}  // namespace pg::bench
