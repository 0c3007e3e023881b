// Metrics math on synthetic timings, SSE parsing, report/CSV/SVG formatting.
#include "bench/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench_plots.h"
#include "bench/reference_points.h"
#include "bench/run_report.h"
#include "bench/stream_client.h"
#include "bench/svg_plot.h"

namespace pg::bench {
namespace {

RequestRecord Rec(double send, double ttft, std::vector<double> gaps, int64_t prompt, int64_t cached, bool ok = true) {
  RequestRecord r;
  r.ok = ok;
  r.send_s = send;
  r.ttft_s = ttft;
  r.itl_s = gaps;
  double e2e = ttft;
  for (double g : gaps) e2e += g;
  r.e2e_s = e2e;
  r.output_tokens = static_cast<int64_t>(gaps.size()) + 1;
  r.output_chunks = r.output_tokens;
  r.prompt_tokens = prompt;
  r.sent_prompt_tokens = prompt;
  r.cached_tokens = cached;
  r.cached_source = cached >= 0 ? "usage" : "";
  return r;
}

TEST(Percentile, LinearInterpolation) {
  EXPECT_FALSE(Percentile({}, 0.5).has_value());
  EXPECT_DOUBLE_EQ(*Percentile({5}, 0.9), 5);
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(*Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1);
  EXPECT_DOUBLE_EQ(*Percentile({10, 0}, 0.0), 0);
  EXPECT_DOUBLE_EQ(*Percentile({10, 0}, 1.0), 10);
}

TEST(Summarize, ReferenceRowsFromSyntheticTimings) {
  std::vector<RequestRecord> recs;
  // Request A: sent at 0, TTFT 1 s, 4 gaps of 0.25 s -> 5 tokens, E2E 2 s, interactivity 4.
  recs.push_back(Rec(0, 1.0, {0.25, 0.25, 0.25, 0.25}, 100, 80));
  // Request B: sent at 1, TTFT 3 s, 2 gaps of 0.5 s -> 3 tokens, E2E 4 s (ends at 5), interactivity 2.
  recs.push_back(Rec(1, 3.0, {0.5, 0.5}, 300, 150));
  // Request C: sent at 2, TTFT 2 s, 1 gap of 0.1 -> 2 tokens, E2E 2.1 s, interactivity 10.
  recs.push_back(Rec(2, 2.0, {0.1}, 100, 70));
  RequestRecord failed = Rec(3, 1, {}, 50, -1, false);
  failed.output_tokens = 0;
  recs.push_back(failed);
  RequestRecord warm = Rec(-1, 9, {9}, 1000, 0);
  warm.warmup = true;
  recs.push_back(warm);
  for (auto& r : recs) r.ideal_cached_tokens = r.sent_prompt_tokens / 2;
  SummaryInputs in;
  in.gpus = 2;
  in.gpu_hour_cost = 3.6;
  Summary s = Summarize(recs, in);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.warmup, 1);
  EXPECT_DOUBLE_EQ(s.window_s, 5.0);  // first send 0 -> last end 5
  EXPECT_EQ(s.output_tokens, 10);
  EXPECT_DOUBLE_EQ(*s.output_tok_s, 2.0);
  EXPECT_DOUBLE_EQ(*s.output_tok_s_gpu, 1.0);
  EXPECT_DOUBLE_EQ(*s.ttft_p50, 2.0);
  EXPECT_DOUBLE_EQ(*s.ttft_p90, 2.8);  // between 2 and 3 at 0.8
  EXPECT_DOUBLE_EQ(*s.e2e_p50, 2.1);
  EXPECT_DOUBLE_EQ(*s.interactivity_p50, 4.0);
  // E2E per output token: 0.4, 1.333, 1.05 -> p90 = 1.05 + 0.8 * (1.333 - 1.05).
  double p90 = 1.05 + 0.8 * (4.0 / 3.0 - 1.05);
  EXPECT_NEAR(*s.p90_e2e_norm_interactivity, 1.0 / p90, 1e-12);
  EXPECT_DOUBLE_EQ(*s.cache_reuse, 300.0 / 500.0);
  EXPECT_EQ(s.cache_reuse_source, "usage");
  EXPECT_DOUBLE_EQ(*s.ideal_reuse, 0.5);
  EXPECT_DOUBLE_EQ(*s.reuse_of_ideal, 1.2);
  // $/Mtok = 3.6 / (1 tok/s/GPU * 3600 / 1e6) = 1000.
  EXPECT_DOUBLE_EQ(*s.cost_per_mtok, 1000.0);
  EXPECT_FALSE(s.tier_device.has_value());
}

TEST(Summarize, CacheReuseIsNaUnlessEveryRequestReportsIt) {
  std::vector<RequestRecord> recs = {Rec(0, 1, {0.1}, 100, 50), Rec(0, 1, {0.1}, 100, -1)};
  Summary s = Summarize(recs, {});
  EXPECT_FALSE(s.cache_reuse.has_value());
  EXPECT_FALSE(s.reuse_of_ideal.has_value());
  SummaryInputs in;
  in.metrics_cached_delta = 120;
  s = Summarize(recs, in);
  EXPECT_DOUBLE_EQ(*s.cache_reuse, 0.6);
  EXPECT_EQ(s.cache_reuse_source, "metrics");
  // Nothing completed: every rate is n/a, nothing divides by zero.
  Summary none = Summarize({Rec(0, 1, {}, 10, 5, false)}, {});
  EXPECT_EQ(none.completed, 0);
  EXPECT_FALSE(none.output_tok_s.has_value());
  EXPECT_FALSE(none.ttft_p50.has_value());
  std::string table = SummaryTable({none});
  EXPECT_NE(table.find("| overall cache reuse | n/a |"), std::string::npos);
}

TEST(Summarize, JsonRoundTripAndTable) {
  std::vector<RequestRecord> a = {Rec(0, 2, {0.5, 0.5}, 100, 50)};
  std::vector<RequestRecord> b = {Rec(0, 1, {0.25, 0.25}, 100, 90)};
  a[0].cached_device = 30;
  a[0].cached_host = 20;
  a[0].cached_disk = 0;
  a[0].served_by = "http://127.0.0.1:8001";
  SummaryInputs in;
  in.label = "standard";
  Summary sa = Summarize(a, in);
  in.label = "managed";
  Summary sb = Summarize(b, in);
  EXPECT_DOUBLE_EQ(*sa.tier_device, 0.3);
  Summary back = SummaryFromJson(SummaryToJson(sa));
  EXPECT_EQ(back.label, "standard");
  EXPECT_DOUBLE_EQ(*back.ttft_p50, 2.0);
  EXPECT_DOUBLE_EQ(*back.tier_host, 0.2);
  RequestRecord r = RecordFromJson(RecordToJson(a[0]));
  EXPECT_EQ(r.itl_s, a[0].itl_s);
  EXPECT_EQ(r.cached_device, 30);
  EXPECT_EQ(r.served_by, "http://127.0.0.1:8001");
  std::string t = SummaryTable({sa, sb});
  EXPECT_NE(t.find("| metric | standard | managed |"), std::string::npos);
  EXPECT_NE(t.find("| median TTFT | 2.00 s | 1.00 s (0.50x) |"), std::string::npos) << t;
  EXPECT_NE(t.find("| overall cache reuse | 50.0% | 90.0% (1.80x) |"), std::string::npos) << t;
  EXPECT_NE(t.find("cached on device tier"), std::string::npos);
  EXPECT_EQ(t.find("cost"), std::string::npos);
  RunReport rep;
  rep.summary = sa;
  rep.records = a;
  auto loaded = RunReportFromJson(RunReportToJson(rep), "x");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->records.size(), 1u);
  EXPECT_FALSE(RunReportFromJson(nlohmann::json::object(), "x").ok());
}

// A failed request's streamed tokens and first token count in the
// failure-inclusive rows only; the rows appear when some run has failures.
TEST(Summarize, FailedRequestsCountInTheInclusiveRowsOnly) {
  std::vector<RequestRecord> recs = {Rec(0, 1, {1}, 100, 0), Rec(0, 3, {0.5, 0.5}, 100, 0, /*ok=*/false)};
  Summary s = Summarize(recs, {});
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_DOUBLE_EQ(*s.output_tok_s, 2.0 / 2.0);      // 2 tokens over [0, 2]
  EXPECT_DOUBLE_EQ(*s.output_tok_s_all, 5.0 / 4.0);  // + 3 streamed tokens, window [0, 4]
  EXPECT_DOUBLE_EQ(*s.ttft_p90, 1.0);
  EXPECT_DOUBLE_EQ(*s.ttft_p90_all, 1.0 + 0.9 * 2.0);  // between 1 and 3
  Summary back = SummaryFromJson(SummaryToJson(s));
  EXPECT_DOUBLE_EQ(*back.output_tok_s_all, 1.25);
  Summary clean = Summarize({Rec(0, 1, {1}, 100, 0)}, {});
  EXPECT_EQ(SummaryTable({clean}).find("incl. failed"), std::string::npos);
  const std::string t = SummaryTable({s, clean});
  EXPECT_NE(t.find("| output tok/s incl. failed requests' streamed tokens | 1.25 | 1.00 (0.80x) |"), std::string::npos)
      << t;
  EXPECT_NE(t.find("| p90 TTFT incl. failed requests | 2.80 s | 1.00 s (0.36x) |"), std::string::npos) << t;
}

TEST(StreamClient, BadUrlAndPrometheusParsing) {
  EXPECT_FALSE(StreamClient::Create({.url = "ftp://x"}).ok());
  std::string m = "# HELP x\nfoo_total{tier=\"a\"} 3\nfoo_total{tier=\"b\"} 4.5\nfoo_total_other 100\nbar 1\n";
  EXPECT_DOUBLE_EQ(*PrometheusCounter(m, "foo_total"), 7.5);
  EXPECT_FALSE(PrometheusCounter(m, "baz").ok());
  EXPECT_FALSE(ParsePromptMode("words").ok());
}

TEST(ReferenceCsv, ParsesEmptyCellsAndQuotes) {
  std::string csv =
      "label,hardware,model,concurrency,output_tok_s_gpu,interactivity,ttft_p50,ttft_p90,e2e_p50,cost_per_mtok,source\n"
      "managed,8x GPU,M,4,9.05,,1.95,10.87,7.92,,\"note, with comma\"\n"
      "curve,B200,M,,1287,51,,,,0.42,article\n";
  auto r = ParseReferenceCsv(csv, "ref.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].source, "note, with comma");
  EXPECT_DOUBLE_EQ(*(*r)[0].concurrency, 4);
  EXPECT_FALSE((*r)[0].interactivity.has_value());
  EXPECT_DOUBLE_EQ(*(*r)[1].cost_per_mtok, 0.42);
  EXPECT_FALSE(ParseReferenceCsv("label,output_tok_s_gpu\nx,abc\n", "r").ok());
  EXPECT_FALSE(ParseReferenceCsv("foo,bar\n", "r").ok());
  Summary m;
  m.label = "c4";
  m.concurrency = 4;
  m.output_tok_s_gpu = 18.1;
  std::string t = ReferenceTable({m}, *r);
  EXPECT_NE(t.find("| managed | 8x GPU | 4 | 9.05 | 18.10 (c4) | 2x |"), std::string::npos) << t;
}

TEST(SvgPlot, TicksAxesAndLegend) {
  auto t = NiceTicks(0, 10, false);
  ASSERT_FALSE(t.empty());
  EXPECT_DOUBLE_EQ(t.front(), 0);
  EXPECT_DOUBLE_EQ(t.back(), 10);
  auto lg = NiceTicks(1, 1000, true);
  EXPECT_DOUBLE_EQ(lg.front(), 1);
  EXPECT_DOUBLE_EQ(lg.back(), 1000);
  PlotLayout spec;
  spec.title = "T <1>";
  spec.x_label = "x";
  spec.y_label = "y";
  std::string svg = RenderSvg(spec, {{"series A", {{1, 2}, {2, 3}}}, {"B", {{1, NAN}}}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("T &lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("series A"), std::string::npos);
  EXPECT_NE(svg.find("<path"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(RenderSvg(spec, {}).find("no data"), std::string::npos);
  // Bench plots render from summaries and records.
  Summary s;
  s.label = "c1";
  s.interactivity_p50 = 10;
  s.output_tok_s_gpu = 5;
  ReferencePoint ref;
  ref.label = "B200";
  ref.interactivity = 51;
  ref.output_tok_s_gpu = 1287;
  std::string tp = ThroughputInteractivityPlot({{"cfg", {s}}}, {ref});
  EXPECT_NE(tp.find("ref: B200"), std::string::npos);
  EXPECT_NE(tp.find("(log)"), std::string::npos);
  RunReport rep;
  rep.summary.label = "base";
  rep.records = {Rec(0, 1, {0.1}, 100, 40), Rec(1, 2, {0.1}, 100, 60)};
  EXPECT_NE(TtftCdfPlot({rep}).find("base"), std::string::npos);
  EXPECT_NE(CacheReuseOverTimePlot(rep).find("ideal (unlimited cache)"), std::string::npos);
}

}  // namespace
}  // namespace pg::bench
