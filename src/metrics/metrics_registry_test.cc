#include "metrics/metrics_registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace pg {
namespace {

TEST(MetricsRegistry, RendersCountersWithLabels) {
  MetricsRegistry r;
  CounterFamily* c = r.AddCounter("x_requests_total", "Requests.", {"endpoint", "status"});
  c->Inc({"/a", "200"});
  c->Inc({"/a", "200"}, 2);
  c->Inc({"/b\"q", "500"});
  std::string text = r.Render();
  EXPECT_NE(text.find("# TYPE x_requests_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("x_requests_total{endpoint=\"/a\",status=\"200\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_requests_total{endpoint=\"/b\\\"q\",status=\"500\"} 1\n"), std::string::npos) << text;
}

TEST(MetricsRegistry, HistogramIsCumulative) {
  MetricsRegistry r;
  Histogram* h = r.AddHistogram("x_latency_seconds", "Latency.", {0.1, 1});
  h->Observe(0.05);
  h->Observe(0.5);
  h->Observe(0.5);
  h->Observe(7);
  std::string text = r.Render();
  EXPECT_NE(text.find("x_latency_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_latency_seconds_bucket{le=\"1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_latency_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_latency_seconds_sum 8.05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_latency_seconds_count 4\n"), std::string::npos) << text;
}

TEST(MetricsRegistry, ConcurrentUpdatesAreCounted) {
  MetricsRegistry r;
  CounterFamily* c = r.AddCounter("x_total", "X.");
  Histogram* h = r.AddHistogram("x_seconds", "X.", MetricsRegistry::LatencyBuckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        c->Inc({});
        h->Observe(0.01);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->Value({}), 8000);
  EXPECT_EQ(h->Count(), 8000u);
}

TEST(MetricsRegistry, InfoGaugeCarriesEscapedLabels) {
  MetricsRegistry r;
  r.AddCounter("a_total", "A.");
  r.AddInfo("x_build_info", "Build.", {{"version", "1.2"}, {"commit", "ab\"c\\d"}});
  const std::string text = r.Render();
  EXPECT_NE(text.find("# TYPE x_build_info gauge\nx_build_info{version=\"1.2\",commit=\"ab\\\"c\\\\d\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("a_total"), text.find("x_build_info"));  // creation order
}

}  // namespace
}  // namespace pg
