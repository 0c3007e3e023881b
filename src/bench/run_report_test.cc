#include "bench/run_report.h"

#include <gtest/gtest.h>

namespace pg::bench {
namespace {

TEST(KvAccountingTest, ReadsMissReasonsAndWhatIfFromMetrics) {
  const std::string text =
      "# HELP prosgrow_prompt_tokens_missed_total x\n"
      "# TYPE prosgrow_prompt_tokens_missed_total counter\n"
      "prosgrow_prompt_tokens_missed_total{reason=\"evicted\"} 300\n"
      "prosgrow_prompt_tokens_missed_total{reason=\"never_seen\"} 100\n"
      "prosgrow_kv_whatif_hit_ratio{tier=\"host\",extra_gib=\"0\"} 0.25\n"
      "prosgrow_kv_whatif_hit_ratio{tier=\"host\",extra_gib=\"1\"} 0.5\n"
      "prosgrow_kv_whatif_extra_blocks{tier=\"host\",extra_gib=\"1\"} 2048\n"
      "prosgrow_cache_reuse_ratio 0.25\n";
  const nlohmann::json a = KvAccountingFromMetrics(text);
  EXPECT_EQ(a["miss_reasons"]["evicted"], 300.0);
  EXPECT_EQ(a["miss_reasons"]["never_seen"], 100.0);
  ASSERT_EQ(a["whatif"].size(), 2u);
  EXPECT_EQ(a["whatif"][1]["tier"], "host");
  EXPECT_EQ(a["whatif"][1]["extra_gib"], 1.0);
  EXPECT_EQ(a["whatif"][1]["hit_ratio"], 0.5);
  const std::string md = KvAccountingTable(a);
  EXPECT_NE(md.find("| evicted | 300 | 75.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| +1 GiB | host | 0.500 |"), std::string::npos) << md;
}

TEST(KvAccountingTest, NothingFromAServerWithoutTheSeries) {
  const nlohmann::json a = KvAccountingFromMetrics("prosgrow_cache_reuse_ratio 0.25\n");
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(KvAccountingTable(a), "");
}

}  // namespace
}  // namespace pg::bench
