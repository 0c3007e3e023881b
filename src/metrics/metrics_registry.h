// MetricsRegistry: live counters, gauges and histograms (the HTTP layer's),
// updated as events happen and rendered through MetricSet (metric_set.h) in
// the Prometheus text exposition format (version 0.0.4).
//
// Families are created once at start-up (Add*) and live as long as the
// registry; the returned pointers stay valid. Updating a metric and Render()
// are thread-safe (one mutex per family; updates are short).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/metric_set.h"

namespace pg {

// A counter with a fixed list of label names; one series per label-value tuple.
class CounterFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // label_values.size() must equal the number of label names.
  void Inc(const std::vector<std::string>& label_values, double amount = 1);
  double Value(const std::vector<std::string>& label_values) const;
  void Collect(MetricSet* out) const;

 private:
  const std::string name_, help_;
  const std::vector<std::string> label_names_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, double> series_;
};

class Gauge {
 public:
  Gauge(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }
  void Collect(MetricSet* out) const;

 private:
  const std::string name_, help_;
  std::atomic<int64_t> value_{0};
};

// Cumulative histogram with fixed upper bounds (seconds, tokens...).
class Histogram {
 public:
  Histogram(std::string name, std::string help, std::vector<double> upper_bounds);
  void Observe(double value);
  uint64_t Count() const;
  void Collect(MetricSet* out) const;

 private:
  const std::string name_, help_;
  const std::vector<double> bounds_;  // ascending; +Inf is implicit
  mutable std::mutex mu_;
  std::vector<uint64_t> buckets_;  // per bound, not cumulative; last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class MetricsRegistry {
 public:
  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]* (PG_CHECKed); counters should end in _total.
  CounterFamily* AddCounter(const std::string& name, const std::string& help,
                            std::vector<std::string> label_names = {});
  Gauge* AddGauge(const std::string& name, const std::string& help);
  Histogram* AddHistogram(const std::string& name, const std::string& help, std::vector<double> upper_bounds);
  // A constant gauge of value 1 whose labels carry facts (the Prometheus
  // "info" idiom), e.g. prosgrow_build_info{version="0.1.0",...} 1.
  void AddInfo(const std::string& name, const std::string& help,
               const std::vector<std::pair<std::string, std::string>>& labels);

  // All families, in creation order, each with # HELP and # TYPE lines.
  std::string Render() const;

  // Latency buckets in seconds, from 1 ms to 10 min.
  static std::vector<double> LatencyBuckets();

 private:
  struct Info {
    std::string name, help;
    MetricLabels labels;
  };
  struct Entry {
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::unique_ptr<Info> info;  // AddInfo
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace pg
