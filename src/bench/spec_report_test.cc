#include "bench/spec_report.h"

#include <gtest/gtest.h>

#include "bench/metrics.h"
#include "bench/run_report.h"

namespace pg::bench {
namespace {

using nlohmann::json;

// The usage prosgrow streams in its last chunk (stream_options.include_usage),
// in the shape of src/server's SpecUsageJson.
constexpr const char* kStreamedUsageChunk = R"({"id":"cmpl-1","object":"text_completion","choices":[],
  "usage":{"prompt_tokens":40,"completion_tokens":24,"total_tokens":64,
  "prompt_tokens_details":{"cached_tokens":16},
  "speculative":{"steps":8,"drafted_tokens":20,"accepted_tokens":15,"acceptance_rate":0.75,
                 "mean_accepted_length":2.875,"synthetic_acceptance":false}}})";

// A non-streaming /v1/chat/completions body under synthetic acceptance.
constexpr const char* kNonStreamingBody = R"({"id":"chatcmpl-1","object":"chat.completion",
  "choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"length"}],
  "usage":{"prompt_tokens":8,"completion_tokens":24,"total_tokens":32,
  "speculative":{"steps":9,"drafted_tokens":36,"accepted_tokens":17,"acceptance_rate":0.47,
                 "mean_accepted_length":2.89,"synthetic_acceptance":true}}})";

TEST(SpecReportTest, ReadsUsageSpeculativeFromAStreamedUsageChunk) {
  RequestRecord r;
  ReadSpecUsage(json::parse(kStreamedUsageChunk)["usage"], &r);
  EXPECT_EQ(r.spec_source, "usage");
  EXPECT_EQ(r.spec_steps, 8);
  EXPECT_EQ(r.spec_drafted, 20);
  EXPECT_EQ(r.spec_accepted, 15);
  EXPECT_FALSE(r.spec_synthetic);
}

TEST(SpecReportTest, ReadsUsageSpeculativeFromANonStreamingBody) {
  RequestRecord r;
  ReadSpecUsage(json::parse(kNonStreamingBody)["usage"], &r);
  EXPECT_EQ(r.spec_steps, 9);
  EXPECT_EQ(r.spec_drafted, 36);
  EXPECT_EQ(r.spec_accepted, 17);
  EXPECT_TRUE(r.spec_synthetic);
}

TEST(SpecReportTest, AbsentOrMalformedSpeculativeLeavesTheRecordUnreported) {
  for (const char* usage : {R"({"prompt_tokens":3})", R"({"speculative":null})", R"({"speculative":[1,2]})",
                            R"({"speculative":{"steps":"8","drafted_tokens":2,"accepted_tokens":1}})",
                            R"({"speculative":{"steps":-1,"drafted_tokens":2,"accepted_tokens":1}})",
                            R"({"speculative":{"drafted_tokens":2,"accepted_tokens":1}})", R"([])"}) {
    RequestRecord r;
    ReadSpecUsage(json::parse(usage), &r);
    EXPECT_EQ(r.spec_source, "") << usage;
    EXPECT_EQ(r.spec_drafted, -1) << usage;
    EXPECT_EQ(r.spec_steps, -1) << usage;
  }
}

TEST(SpecReportTest, LlamaCppTimingsGiveDraftedAndAcceptedButNoSteps) {
  RequestRecord r;
  ReadSpecTimings(json::parse(R"({"cache_n":0,"prompt_n":8,"draft_n":30,"draft_n_accepted":12})"), &r);
  EXPECT_EQ(r.spec_source, "timings");
  EXPECT_EQ(r.spec_drafted, 30);
  EXPECT_EQ(r.spec_accepted, 12);
  EXPECT_EQ(r.spec_steps, -1);
  // Timings without draft fields (speculation off) report nothing.
  RequestRecord off;
  ReadSpecTimings(json::parse(R"({"cache_n":0,"prompt_n":8})"), &off);
  EXPECT_EQ(off.spec_source, "");
  // usage.speculative wins over timings, whichever arrives first.
  RequestRecord both;
  ReadSpecUsage(json::parse(kStreamedUsageChunk)["usage"], &both);
  ReadSpecTimings(json::parse(R"({"draft_n":1,"draft_n_accepted":1})"), &both);
  EXPECT_EQ(both.spec_source, "usage");
  EXPECT_EQ(both.spec_drafted, 20);
}

TEST(SpecReportTest, PerDrafterCountersFromMetricsAndTheirDelta) {
  const std::string before =
      "# TYPE prosgrow_spec_steps_total counter\n"
      "prosgrow_spec_steps_total{drafter=\"suffix\"} 10\n"
      "prosgrow_spec_draft_tokens_total{drafter=\"suffix\"} 40\n"
      "prosgrow_spec_accepted_tokens_total{drafter=\"suffix\"} 30\n"
      "prosgrow_spec_acceptance_rate{drafter=\"suffix\"} 0.75\n"
      "prosgrow_spec_synthetic_acceptance 0\n";
  const std::string after =
      "prosgrow_spec_steps_total{drafter=\"suffix\"} 30\n"
      "prosgrow_spec_draft_tokens_total{drafter=\"suffix\"} 100\n"
      "prosgrow_spec_accepted_tokens_total{drafter=\"suffix\"} 80\n"
      "prosgrow_spec_steps_total{drafter=\"ngram\"} 4\n"
      "prosgrow_spec_draft_tokens_total{drafter=\"ngram\"} 7\n"
      "prosgrow_spec_accepted_tokens_total{drafter=\"ngram\"} 3\n";
  const auto b = SpecCountersFromMetrics(before);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b.at("suffix").drafted, 40);
  const auto d = SpecCountersDelta(b, SpecCountersFromMetrics(after));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.at("suffix").steps, 20);
  EXPECT_EQ(d.at("suffix").drafted, 60);
  EXPECT_EQ(d.at("suffix").accepted, 50);
  EXPECT_EQ(d.at("ngram").steps, 4);
  EXPECT_EQ(d.at("ngram").accepted, 3);
  EXPECT_DOUBLE_EQ(*d.at("suffix").MeanAcceptedLength(), 1.0 + 50.0 / 20.0);
  EXPECT_TRUE(SpecCountersFromMetrics("prosgrow_requests_finished_total 3\n").empty());
}

RequestRecord Measured(int64_t steps, int64_t drafted, int64_t accepted, const char* source) {
  RequestRecord r;
  r.ok = true;
  r.e2e_s = 1;
  r.output_tokens = 10;
  r.spec_steps = steps;
  r.spec_drafted = drafted;
  r.spec_accepted = accepted;
  r.spec_source = source;
  return r;
}

TEST(SpecReportTest, SummaryCountsMeasuredRequestsOnly) {
  std::vector<RequestRecord> recs = {Measured(4, 10, 6, "usage"), Measured(6, 20, 12, "usage"),
                                     Measured(100, 100, 100, "usage"), Measured(100, 100, 100, "usage"),
                                     Measured(-1, -1, -1, "")};
  recs[2].warmup = true;
  recs[3].ok = false;
  const auto s = SummarizeSpec(recs, {});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->requests, 2);
  EXPECT_EQ(s->total.steps, 10);
  EXPECT_EQ(s->total.drafted, 30);
  EXPECT_EQ(s->total.accepted, 18);
  EXPECT_DOUBLE_EQ(*s->total.AcceptanceRate(), 0.6);
  EXPECT_DOUBLE_EQ(*s->total.MeanAcceptedLength(), 2.8);
  EXPECT_EQ(s->source, "usage");
  EXPECT_FALSE(s->synthetic);
  // No request reported speculation and no drafter counters: nothing to show.
  EXPECT_FALSE(SummarizeSpec({Measured(-1, -1, -1, "")}, {}).has_value());
  EXPECT_EQ(SpecTable(std::nullopt), "");
}

TEST(SpecReportTest, TimingsOnlyRunHasNoMeanLength) {
  const auto s = SummarizeSpec({Measured(-1, 10, 4, "timings"), Measured(5, 10, 4, "usage")}, {});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->source, "mixed");
  EXPECT_EQ(s->total.steps, -1);
  EXPECT_FALSE(s->total.MeanAcceptedLength().has_value());
  EXPECT_DOUBLE_EQ(*s->total.AcceptanceRate(), 0.4);
}

TEST(SpecReportTest, SummaryJsonRoundTripAndTables) {
  std::vector<RequestRecord> recs = {Measured(8, 20, 15, "usage")};
  recs[0].spec_synthetic = true;
  SummaryInputs in;
  in.label = "spec";
  in.spec_by_drafter["suffix"] = SpecCounts{8, 20, 15};
  const Summary s = Summarize(recs, in);
  ASSERT_TRUE(s.spec.has_value());
  const json j = SummaryToJson(s);
  EXPECT_EQ(j["speculative"]["requests"]["drafted_tokens"], 20);
  EXPECT_EQ(j["speculative"]["by_drafter"]["suffix"]["accepted_tokens"], 15);
  EXPECT_DOUBLE_EQ(j["speculative"]["requests"]["acceptance_rate"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["speculative"]["requests"]["mean_accepted_length"].get<double>(), 1.0 + 15.0 / 8.0);
  EXPECT_TRUE(j["speculative"]["synthetic_acceptance"].get<bool>());
  const Summary back = SummaryFromJson(j);
  ASSERT_TRUE(back.spec.has_value());
  EXPECT_EQ(back.spec->total.steps, 8);
  EXPECT_EQ(back.spec->requests, 1);
  EXPECT_EQ(back.spec->by_drafter.at("suffix").drafted, 20);
  EXPECT_TRUE(back.spec->synthetic);

  const std::string md = SpecTable(back.spec);
  EXPECT_NE(md.find("| drafter suffix (/metrics) | 8 | 20 | 15 | 0.750 | 2.88 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all requests (usage, 1 with a draft) | 8 | 20 | 15 | 0.750 | 2.88 |"), std::string::npos) << md;
  EXPECT_NE(md.find("NOT the model's output"), std::string::npos) << md;
  const std::string table = SummaryTable({back});
  EXPECT_NE(table.find("| speculative: draft acceptance rate | 75.0% |"), std::string::npos) << table;
  EXPECT_NE(table.find("| speculative: mean accepted length (tokens/step) | 2.88 |"), std::string::npos) << table;

  // A run without speculation: null in JSON, no rows in the table.
  const Summary plain = Summarize({Measured(-1, -1, -1, "")}, SummaryInputs{});
  EXPECT_TRUE(SummaryToJson(plain)["speculative"].is_null());
  EXPECT_FALSE(SummaryFromJson(SummaryToJson(plain)).spec.has_value());
  EXPECT_EQ(SummaryTable({plain}).find("speculative"), std::string::npos);
}

TEST(SpecReportTest, RecordJsonRoundTrip) {
  RequestRecord r = Measured(3, 9, 5, "usage");
  r.spec_synthetic = true;
  const RequestRecord back = RecordFromJson(RecordToJson(r));
  EXPECT_EQ(back.spec_steps, 3);
  EXPECT_EQ(back.spec_drafted, 9);
  EXPECT_EQ(back.spec_accepted, 5);
  EXPECT_TRUE(back.spec_synthetic);
  EXPECT_EQ(back.spec_source, "usage");
  EXPECT_FALSE(RecordToJson(Measured(-1, -1, -1, "")).contains("speculative"));
}

}  // namespace
}  // namespace pg::bench
