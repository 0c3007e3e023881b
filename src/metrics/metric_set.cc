#include "metrics/metric_set.h"

#include <fmt/format.h>

#include <cmath>

#include "base/check.h"
#include "base/enum_names.h"

namespace pg {
namespace {

// The exposition format's escapes: backslash and newline in HELP text, and
// the double quote too in a label value (quote = true).
std::string EscapeExposition(const std::string& v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (quote && c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

constexpr const char* kMetricTypeNames[] = {"counter", "gauge", "histogram"};  // by MetricType

const char* TypeName(MetricType t) { return EnumName(t, kMetricTypeNames, "untyped"); }

}  // namespace

bool IsValidMetricName(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

MetricValue::MetricValue(int64_t v) : text_(fmt::format("{}", v)) {}
MetricValue::MetricValue(uint64_t v) : text_(fmt::format("{}", v)) {}

MetricValue::MetricValue(double v) {
  if (std::isinf(v))
    text_ = v > 0 ? "+Inf" : "-Inf";
  else if (std::isnan(v))
    text_ = "NaN";
  else if (v == std::floor(v) && std::fabs(v) < 1e15)
    text_ = fmt::format("{}", static_cast<int64_t>(v));
  else
    text_ = fmt::format("{}", v);
}

MetricValue MetricValue::Fixed(double v, int decimals) { return MetricValue(fmt::format("{:.{}f}", v, decimals)); }

MetricValue MetricValue::Significant(double v, int digits) { return MetricValue(fmt::format("{:.{}g}", v, digits)); }

MetricFamily::MetricFamily(std::string name, std::string help, MetricType type)
    : name_(std::move(name)), help_(std::move(help)), type_(type) {}

MetricFamily& MetricFamily::AddSuffixed(std::string suffix, MetricLabels labels, MetricValue value) {
  for (const auto& l : labels) PG_CHECK(IsValidMetricName(l.first));
  samples_.push_back(Sample{std::move(suffix), std::move(labels), value.text()});
  return *this;
}

void MetricFamily::Render(std::string* out) const {
  *out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, EscapeExposition(help_, /*quote=*/false), name_,
                      TypeName(type_));
  for (const Sample& s : samples_) {
    *out += name_;
    *out += s.suffix;
    if (!s.labels.empty()) {
      *out += '{';
      for (size_t i = 0; i < s.labels.size(); ++i) {
        if (i) *out += ',';
        *out += fmt::format("{}=\"{}\"", s.labels[i].first, EscapeExposition(s.labels[i].second, /*quote=*/true));
      }
      *out += '}';
    }
    *out += ' ';
    *out += s.value;
    *out += '\n';
  }
}

MetricFamily& MetricSet::AddFamily(const std::string& name, const std::string& help, MetricType type) {
  PG_CHECK(IsValidMetricName(name));
  families_.push_back(std::make_unique<MetricFamily>(name, help, type));
  return *families_.back();
}

MetricFamily& MetricSet::Counter(const std::string& name, const std::string& help) {
  return AddFamily(name, help, MetricType::kCounter);
}
MetricFamily& MetricSet::Gauge(const std::string& name, const std::string& help) {
  return AddFamily(name, help, MetricType::kGauge);
}
MetricFamily& MetricSet::Histogram(const std::string& name, const std::string& help) {
  return AddFamily(name, help, MetricType::kHistogram);
}

void MetricSet::RenderTo(std::string* out) const {
  for (const auto& f : families_) f->Render(out);
}

std::string MetricSet::Render() const {
  std::string out;
  RenderTo(&out);
  return out;
}

}  // namespace pg
