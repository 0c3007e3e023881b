// MetricSet: typed metric families (counters, gauges, histograms) with
// labelled samples, rendered in the Prometheus text exposition format
// (version 0.0.4). It is the one writer of `# HELP` / `# TYPE` lines in
// prosgrow: the engine, the KV cache, speculative decoding, the KV event
// bridge and the router hand it values from their snapshots, and the HTTP
// layer's live MetricsRegistry (metrics_registry.h) renders through it.
//
// A set is built, rendered and dropped by one thread (no locking). Families
// render in the order they were added, samples in the order they were added.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pg {

// (label name, label value) pairs, in the order they print.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

// A sample's value and how it prints. Integers print exactly; doubles print
// in the shortest form that round-trips, integral ones without a fraction,
// infinities as +Inf/-Inf. Fixed/Significant keep a family's fixed format
// (e.g. "0.250000" for {:.6f}).
class MetricValue {
 public:
  MetricValue(int v) : MetricValue(static_cast<int64_t>(v)) {}  // NOLINT: implicit on purpose
  MetricValue(int64_t v);                                       // NOLINT
  MetricValue(uint64_t v);                                      // NOLINT
  MetricValue(double v);                                        // NOLINT
  static MetricValue Fixed(double v, int decimals);             // fmt "{:.Nf}"
  static MetricValue Significant(double v, int digits);         // fmt "{:.Ng}"
  const std::string& text() const { return text_; }

 private:
  explicit MetricValue(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

class MetricFamily {
 public:
  MetricFamily(std::string name, std::string help, MetricType type);
  // One sample; `suffix` is appended to the family name (histograms' _bucket,
  // _sum, _count). Label names must be valid metric label names (PG_CHECKed).
  MetricFamily& Add(MetricValue value) { return Add({}, std::move(value)); }
  MetricFamily& Add(MetricLabels labels, MetricValue value) {
    return AddSuffixed("", std::move(labels), std::move(value));
  }
  MetricFamily& AddSuffixed(std::string suffix, MetricLabels labels, MetricValue value);
  void Render(std::string* out) const;

 private:
  struct Sample {
    std::string suffix;
    MetricLabels labels;
    std::string value;
  };
  const std::string name_, help_;
  const MetricType type_;
  std::vector<Sample> samples_;
};

class MetricSet {
 public:
  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]* (PG_CHECKed); counters should end in _total.
  MetricFamily& Counter(const std::string& name, const std::string& help);
  MetricFamily& Gauge(const std::string& name, const std::string& help);
  MetricFamily& Histogram(const std::string& name, const std::string& help);
  // Shorthands for a family with one unlabelled sample.
  void Counter(const std::string& name, const std::string& help, MetricValue value) { Counter(name, help).Add(value); }
  void Gauge(const std::string& name, const std::string& help, MetricValue value) { Gauge(name, help).Add(value); }

  // Every family, each with its # HELP and # TYPE lines.
  std::string Render() const;
  void RenderTo(std::string* out) const;
  bool empty() const { return families_.empty(); }

 private:
  MetricFamily& AddFamily(const std::string& name, const std::string& help, MetricType type);
  std::vector<std::unique_ptr<MetricFamily>> families_;  // stable addresses for the returned references
};

// Whether name matches the Prometheus metric / label name pattern.
bool IsValidMetricName(const std::string& name);

}  // namespace pg
