#include "bench/spec_report.h"

#include <fmt/format.h>

#include "bench/prom_text.h"

namespace pg::bench {
namespace {

using nlohmann::json;

// A non-negative integer field, nullopt when absent or of another type.
std::optional<int64_t> Count(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  if (!(v >= 0)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string Opt(const std::optional<double>& v, const char* fmt_spec) {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) : "n/a";
}

std::string Row(const std::string& name, const SpecCounts& c) {
  return fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, c.steps >= 0 ? std::to_string(c.steps) : "n/a",
                     c.drafted, c.accepted, Opt(c.AcceptanceRate(), "{:.3f}"), Opt(c.MeanAcceptedLength(), "{:.2f}"));
}

json CountsJson(const SpecCounts& c) {
  json j = {{"steps", c.steps >= 0 ? json(c.steps) : json(nullptr)},
            {"drafted_tokens", c.drafted},
            {"accepted_tokens", c.accepted}};
  auto put = [&](const char* k, const std::optional<double>& v) { j[k] = v ? json(*v) : json(nullptr); };
  put("acceptance_rate", c.AcceptanceRate());
  put("mean_accepted_length", c.MeanAcceptedLength());
  return j;
}

SpecCounts CountsFromJson(const json& j) {
  SpecCounts c;
  c.steps = Count(j, "steps").value_or(-1);
  c.drafted = Count(j, "drafted_tokens").value_or(0);
  c.accepted = Count(j, "accepted_tokens").value_or(0);
  return c;
}

}  // namespace

std::optional<double> SpecCounts::AcceptanceRate() const {
  if (drafted <= 0) return std::nullopt;
  return static_cast<double>(accepted) / static_cast<double>(drafted);
}

std::optional<double> SpecCounts::MeanAcceptedLength() const {
  if (steps <= 0) return std::nullopt;
  return 1.0 + static_cast<double>(accepted) / static_cast<double>(steps);
}

void ReadSpecUsage(const json& usage, RequestRecord* rec) {
  if (!usage.is_object() || !usage.contains("speculative")) return;
  const json& s = usage["speculative"];
  auto steps = Count(s, "steps");
  auto drafted = Count(s, "drafted_tokens");
  auto accepted = Count(s, "accepted_tokens");
  if (!steps || !drafted || !accepted) return;
  rec->spec_steps = *steps;
  rec->spec_drafted = *drafted;
  rec->spec_accepted = *accepted;
  rec->spec_synthetic = s.contains("synthetic_acceptance") && s["synthetic_acceptance"].is_boolean() &&
                        s["synthetic_acceptance"].get<bool>();
  rec->spec_source = "usage";
}

void ReadSpecTimings(const json& timings, RequestRecord* rec) {
  if (rec->spec_source == "usage") return;
  auto drafted = Count(timings, "draft_n");
  auto accepted = Count(timings, "draft_n_accepted");
  if (!drafted || !accepted) return;
  rec->spec_steps = -1;
  rec->spec_drafted = *drafted;
  rec->spec_accepted = *accepted;
  rec->spec_source = "timings";
}

std::map<std::string, SpecCounts> SpecCountersFromMetrics(const std::string& metrics_text) {
  std::map<std::string, SpecCounts> out;
  ForEachLabelledSample(metrics_text, [&](const LabelledSample& s) {
    int64_t SpecCounts::*field = nullptr;
    if (s.name == "prosgrow_spec_steps_total") field = &SpecCounts::steps;
    if (s.name == "prosgrow_spec_draft_tokens_total") field = &SpecCounts::drafted;
    if (s.name == "prosgrow_spec_accepted_tokens_total") field = &SpecCounts::accepted;
    const std::string drafter = LabelValue(s.line, "drafter");
    if (field == nullptr || drafter.empty()) return;
    SpecCounts& c = out.try_emplace(drafter, SpecCounts{0, 0, 0}).first->second;
    c.*field = static_cast<int64_t>(s.value);
  });
  return out;
}

std::map<std::string, SpecCounts> SpecCountersDelta(const std::map<std::string, SpecCounts>& before,
                                                    const std::map<std::string, SpecCounts>& after) {
  std::map<std::string, SpecCounts> out;
  for (const auto& [name, a] : after) {
    SpecCounts d = a;
    if (auto it = before.find(name); it != before.end()) {
      d.steps -= it->second.steps;
      d.drafted -= it->second.drafted;
      d.accepted -= it->second.accepted;
    }
    out[name] = d;
  }
  return out;
}

std::optional<SpecSummary> SummarizeSpec(const std::vector<RequestRecord>& records,
                                         const std::map<std::string, SpecCounts>& by_drafter) {
  SpecSummary s;
  s.total = SpecCounts{0, 0, 0};
  bool from_usage = false, from_timings = false;
  for (const RequestRecord& r : records) {
    if (r.warmup || !r.ok || r.spec_source.empty()) continue;
    ++s.requests;
    if (r.spec_steps < 0) s.total.steps = -1;
    if (s.total.steps >= 0) s.total.steps += r.spec_steps;
    s.total.drafted += std::max<int64_t>(0, r.spec_drafted);
    s.total.accepted += std::max<int64_t>(0, r.spec_accepted);
    s.synthetic |= r.spec_synthetic;
    from_usage |= r.spec_source == "usage";
    from_timings |= r.spec_source == "timings";
  }
  if (s.requests == 0 && by_drafter.empty()) return std::nullopt;
  s.source = from_usage && from_timings ? "mixed" : from_usage ? "usage" : from_timings ? "timings" : "";
  s.by_drafter = by_drafter;
  return s;
}

json SpecSummaryToJson(const SpecSummary& s) {
  json by = json::object();
  for (const auto& [name, c] : s.by_drafter) by[name] = CountsJson(c);
  json total = CountsJson(s.total);
  total["requests"] = s.requests;
  return {{"requests", total}, {"synthetic_acceptance", s.synthetic}, {"source", s.source}, {"by_drafter", by}};
}

std::optional<SpecSummary> SpecSummaryFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  SpecSummary s;
  if (j.contains("requests") && j["requests"].is_object()) {
    s.total = CountsFromJson(j["requests"]);
    s.requests = Count(j["requests"], "requests").value_or(0);
  }
  if (j.contains("synthetic_acceptance") && j["synthetic_acceptance"].is_boolean()) {
    s.synthetic = j["synthetic_acceptance"].get<bool>();
  }
  if (j.contains("source") && j["source"].is_string()) s.source = j["source"].get<std::string>();
  if (j.contains("by_drafter") && j["by_drafter"].is_object()) {
    for (const auto& [name, c] : j["by_drafter"].items()) s.by_drafter[name] = CountsFromJson(c);
  }
  return s;
}

std::string SpecTable(const std::optional<SpecSummary>& s) {
  if (!s) return "";
  std::string md =
      "| speculative decoding | steps | drafted | accepted | acceptance rate | mean accepted length |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& [name, c] : s->by_drafter) md += Row("drafter " + name + " (/metrics)", c);
  md += Row(
      fmt::format("all requests ({}, {} with a draft)", s->source.empty() ? "none reported" : s->source, s->requests),
      s->total);
  if (s->synthetic) {
    md += "\nSYNTHETIC ACCEPTANCE (benchmark only): accepted drafts are NOT the model's output.\n";
  }
  return md;
}

}  // namespace pg::bench
