#include "metrics/metrics_registry.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace pg {

CounterFamily::CounterFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}

void CounterFamily::Inc(const std::vector<std::string>& label_values, double amount) {
  PG_CHECK(label_values.size() == label_names_.size());
  PG_CHECK(amount >= 0);
  std::lock_guard<std::mutex> lock(mu_);
  series_[label_values] += amount;
}

double CounterFamily::Value(const std::vector<std::string>& label_values) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(label_values);
  return it == series_.end() ? 0 : it->second;
}

void CounterFamily::Collect(MetricSet* out) const {
  MetricFamily& f = out->Counter(name_, help_);
  std::lock_guard<std::mutex> lock(mu_);
  if (label_names_.empty()) {
    auto it = series_.find({});
    f.Add(it == series_.end() ? 0.0 : it->second);
    return;
  }
  for (const auto& [values, v] : series_) {
    MetricLabels labels;
    for (size_t i = 0; i < values.size(); ++i) labels.emplace_back(label_names_[i], values[i]);
    f.Add(std::move(labels), v);
  }
}

void Gauge::Collect(MetricSet* out) const { out->Gauge(name_, help_).Add(Value()); }

Histogram::Histogram(std::string name, std::string help, std::vector<double> upper_bounds)
    : name_(std::move(name)), help_(std::move(help)), bounds_(std::move(upper_bounds)) {
  PG_CHECK(std::is_sorted(bounds_.begin(), bounds_.end()));
  buckets_.assign(bounds_.size() + 1, 0);
}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  std::lock_guard<std::mutex> lock(mu_);
  buckets_[i] += 1;
  sum_ += value;
  count_ += 1;
}

uint64_t Histogram::Count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

void Histogram::Collect(MetricSet* out) const {
  MetricFamily& f = out->Histogram(name_, help_);
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i];
    f.AddSuffixed("_bucket", {{"le", MetricValue(bounds_[i]).text()}}, cumulative);
  }
  cumulative += buckets_.back();
  f.AddSuffixed("_bucket", {{"le", "+Inf"}}, cumulative);
  f.AddSuffixed("_sum", {}, sum_);
  f.AddSuffixed("_count", {}, count_);
}

CounterFamily* MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                           std::vector<std::string> label_names) {
  PG_CHECK(IsValidMetricName(name));
  for (const auto& l : label_names) PG_CHECK(IsValidMetricName(l));
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  e.counter = std::make_unique<CounterFamily>(name, help, std::move(label_names));
  entries_.push_back(std::move(e));
  return entries_.back().counter.get();
}

Gauge* MetricsRegistry::AddGauge(const std::string& name, const std::string& help) {
  PG_CHECK(IsValidMetricName(name));
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  e.gauge = std::make_unique<Gauge>(name, help);
  entries_.push_back(std::move(e));
  return entries_.back().gauge.get();
}

Histogram* MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                         std::vector<double> upper_bounds) {
  PG_CHECK(IsValidMetricName(name));
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  e.histogram = std::make_unique<Histogram>(name, help, std::move(upper_bounds));
  entries_.push_back(std::move(e));
  return entries_.back().histogram.get();
}

void MetricsRegistry::AddInfo(const std::string& name, const std::string& help,
                              const std::vector<std::pair<std::string, std::string>>& labels) {
  PG_CHECK(IsValidMetricName(name));
  for (const auto& l : labels) PG_CHECK(IsValidMetricName(l.first));
  Entry e;
  e.info = std::make_unique<Info>(Info{name, help, labels});
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(std::move(e));
}

std::string MetricsRegistry::Render() const {
  MetricSet set;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.counter) e.counter->Collect(&set);
      if (e.gauge) e.gauge->Collect(&set);
      if (e.histogram) e.histogram->Collect(&set);
      if (e.info) set.Gauge(e.info->name, e.info->help).Add(e.info->labels, 1);
    }
  }
  return set.Render();
}

std::vector<double> MetricsRegistry::LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600};
}

}  // namespace pg
