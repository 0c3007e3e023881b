// The speculative-decoding extensions of the OpenAI bodies (issue 15).
#include <gtest/gtest.h>

#include "server/openai/openai_response.h"

namespace pg {
namespace {

TEST(OpenAiSpecResponse, UsageCarriesSpeculativeCountsOnlyWhenItRan) {
  nlohmann::json usage = {{"prompt_tokens", 3}};
  AddSpecUsage(&usage, SpecUsage{});
  EXPECT_FALSE(usage.contains("speculative"));
  SpecUsage s;
  s.steps = 4;
  s.drafted = 10;
  s.accepted = 6;
  AddSpecUsage(&usage, s);
  ASSERT_TRUE(usage.contains("speculative"));
  EXPECT_EQ(usage["speculative"]["accepted_tokens"], 6);
  EXPECT_DOUBLE_EQ(usage["speculative"]["acceptance_rate"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(usage["speculative"]["mean_accepted_length"].get<double>(), 2.5);
  EXPECT_FALSE(usage["speculative"]["synthetic_acceptance"].get<bool>());
}

TEST(OpenAiSpecResponse, SyntheticAcceptanceIsAnnounced) {
  ServiceInfo info;
  EXPECT_TRUE(SpeculativeModelJson(info)["speculative"].is_null());
  EXPECT_FALSE(SpeculativeModelJson(info)["synthetic_acceptance"].get<bool>());
  EXPECT_EQ(SyntheticAcceptanceHeaderValue(info), "");
  info.speculative = "ngram";
  info.synthetic_acceptance_length = 3;
  auto j = SpeculativeModelJson(info);
  EXPECT_EQ(j["speculative"], "ngram");
  EXPECT_TRUE(j["synthetic_acceptance"].get<bool>());
  EXPECT_EQ(j["synthetic_acceptance_length"], 3.0);
  EXPECT_NE(SyntheticAcceptanceHeaderValue(info).find("not the model's own"), std::string::npos);
  SpecUsage s;
  s.synthetic = true;
  nlohmann::json usage = nlohmann::json::object();
  AddSpecUsage(&usage, s);
  EXPECT_TRUE(usage["speculative"]["synthetic_acceptance"].get<bool>());
}

}  // namespace
}  // namespace pg
