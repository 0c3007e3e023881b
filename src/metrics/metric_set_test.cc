#include "metrics/metric_set.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pg {
namespace {

TEST(MetricSet, RendersFamiliesInOrderWithHelpAndType) {
  MetricSet m;
  m.Gauge("b_gauge", "A gauge.", int64_t{7});
  m.Counter("a_total", "A counter.").Add({{"tier", "device"}}, 1).Add({{"tier", "host"}}, 2);
  EXPECT_EQ(
      m.Render(),
      "# HELP b_gauge A gauge.\n# TYPE b_gauge gauge\nb_gauge 7\n"
      "# HELP a_total A counter.\n# TYPE a_total counter\na_total{tier=\"device\"} 1\na_total{tier=\"host\"} 2\n");
}

TEST(MetricSet, ValuesPrintAsTheyAlwaysHave) {
  EXPECT_EQ(MetricValue(0.0).text(), "0");
  EXPECT_EQ(MetricValue(3.0).text(), "3");
  EXPECT_EQ(MetricValue(0.25).text(), "0.25");
  EXPECT_EQ(MetricValue(INFINITY).text(), "+Inf");
  EXPECT_EQ(MetricValue(uint64_t{18446744073709551615u}).text(), "18446744073709551615");
  EXPECT_EQ(MetricValue::Fixed(0.25, 6).text(), "0.250000");
  EXPECT_EQ(MetricValue::Fixed(0.12345, 4).text(), "0.1235");
  EXPECT_EQ(MetricValue::Significant(1.234567e-7, 6).text(), "1.23457e-07");
}

TEST(MetricSet, EscapesLabelValuesAndHelp) {
  MetricSet m;
  m.Gauge("g", "line\\one\ntwo").Add({{"l", "a\"b\\c\nd"}, {"k", "v"}}, 1);
  EXPECT_EQ(m.Render(), "# HELP g line\\\\one\\ntwo\n# TYPE g gauge\ng{l=\"a\\\"b\\\\c\\nd\",k=\"v\"} 1\n");
}

TEST(MetricSet, HistogramSamplesCarrySuffixes) {
  MetricSet m;
  m.Histogram("h_seconds", "H.")
      .AddSuffixed("_bucket", {{"le", "1"}}, 2)
      .AddSuffixed("_bucket", {{"le", "+Inf"}}, 3)
      .AddSuffixed("_sum", {}, 4.5)
      .AddSuffixed("_count", {}, 3);
  EXPECT_EQ(m.Render(),
            "# HELP h_seconds H.\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"1\"} 2\n"
            "h_seconds_bucket{le=\"+Inf\"} 3\nh_seconds_sum 4.5\nh_seconds_count 3\n");
}

TEST(MetricSet, FamilyWithoutSamplesRendersItsHeader) {
  MetricSet m;
  m.Counter("c_total", "C.");
  EXPECT_EQ(m.Render(), "# HELP c_total C.\n# TYPE c_total counter\n");
}

TEST(MetricSetDeathTest, RejectsInvalidNames) {
  MetricSet m;
  EXPECT_DEATH(m.Gauge("9bad", "x"), "");
  EXPECT_DEATH(m.Gauge("ok", "x").Add({{"bad-label", "v"}}, 1), "");
}

}  // namespace
}  // namespace pg
