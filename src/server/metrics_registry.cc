#include "server/metrics_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace pg {
namespace {

bool IsValidMetricName(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// Prometheus floats: integers print without a fraction, +Inf as "+Inf".
std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

void Header(std::string* out, const std::string& name, const std::string& help, const char* type) {
  *out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(help), name, type);
}

}  // namespace

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

void CounterFamily::Render(std::string* out) const {
  Header(out, name_, help_, "counter");
  std::lock_guard<std::mutex> lock(mu_);
  if (label_names_.empty()) {
    auto it = series_.find({});
    *out += fmt::format("{} {}\n", name_, FormatValue(it == series_.end() ? 0 : it->second));
    return;
  }
  for (const auto& [values, v] : series_) {
    std::string labels;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) labels += ',';
      labels += fmt::format("{}=\"{}\"", label_names_[i], EscapeLabelValue(values[i]));
    }
    *out += fmt::format("{}{{{}}} {}\n", name_, labels, FormatValue(v));
  }
}

void Gauge::Render(std::string* out) const {
  Header(out, name_, help_, "gauge");
  *out += fmt::format("{} {}\n", name_, Value());
}

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

void Histogram::Render(std::string* out) const {
  Header(out, name_, help_, "histogram");
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i];
    *out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name_, FormatValue(bounds_[i]), cumulative);
  }
  cumulative += buckets_.back();
  *out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name_, cumulative);
  *out += fmt::format("{}_sum {}\n{}_count {}\n", name_, FormatValue(sum_), name_, count_);
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
  Entry e;
  Header(&e.fixed, name, help, "gauge");
  std::string text;
  for (const auto& [label, value] : labels) {
    PG_CHECK(IsValidMetricName(label));
    if (!text.empty()) text += ",";
    text += fmt::format("{}=\"{}\"", label, EscapeLabelValue(value));
  }
  e.fixed += fmt::format("{}{{{}}} 1\n", name, text);
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(std::move(e));
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.counter) e.counter->Render(&out);
    if (e.gauge) e.gauge->Render(&out);
    if (e.histogram) e.histogram->Render(&out);
    out += e.fixed;
  }
  return out;
}

std::vector<double> MetricsRegistry::LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
          2.5,   5,      10,    20,   30,    60,   120, 300, 600};
}

}  // namespace pg
