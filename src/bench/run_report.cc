#include "bench/run_report.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench/prom_text.h"

namespace pg::bench {

nlohmann::json RunReportToJson(const RunReport& r) {
  nlohmann::json j;
  j["format"] = "prosgrow-bench-run/1";
  j["config"] = r.config;
  j["summary"] = SummaryToJson(r.summary);
  nlohmann::json reqs = nlohmann::json::array();
  for (const RequestRecord& rec : r.records) reqs.push_back(RecordToJson(rec));
  j["requests"] = std::move(reqs);
  return j;
}

Result<RunReport> RunReportFromJson(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "prosgrow-bench-run/1") {
    return Corrupt(name + ": not a prosgrow bench run (format prosgrow-bench-run/1)");
  }
  if (!j.contains("summary") || !j["summary"].is_object()) return Corrupt(name + ": missing 'summary'");
  RunReport r;
  r.config = j.contains("config") ? j["config"] : nlohmann::json::object();
  r.summary = SummaryFromJson(j["summary"]);
  if (j.contains("requests") && j["requests"].is_array()) {
    for (const auto& q : j["requests"]) r.records.push_back(RecordFromJson(q));
  }
  if (!r.summary.output_tok_s_all && !r.records.empty()) SummarizeWithFailed(r.records, r.summary);  // older runs
  return r;
}

Result<RunReport> LoadRunReport(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Corrupt(path + ": not valid JSON");
  return RunReportFromJson(j, path);
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError("cannot write " + path);
  out << text;
  out.close();
  if (!out) return IoError("write failed: " + path);
  return Status::Ok();
}

std::string FormatOpt(const std::optional<double>& v, int digits) {
  if (!v) return "n/a";
  return fmt::format("{:.{}f}", *v, digits);
}

namespace {

struct Row {
  const char* name;
  std::optional<double> (*get)(const Summary&);
  // Printed value: x * scale with `digits` decimals and `suffix`.
  double scale;
  int digits;
  const char* suffix;
  bool optional = false;       // shown only when some run has a value
  bool with_failures = false;  // shown only when some run has failed requests
};

std::string Cell(const Row& row, const Summary& s) {
  auto v = row.get(s);
  if (!v) return "n/a";
  return fmt::format("{:.{}f}{}", *v * row.scale, row.digits, row.suffix);
}

}  // namespace

std::string SummaryTable(const std::vector<Summary>& runs) {
  static const Row kRows[] = {
      {"output tok/s per GPU", [](const Summary& s) { return s.output_tok_s_gpu; }, 1, 2, ""},
      {"output tok/s, whole server", [](const Summary& s) { return s.output_tok_s; }, 1, 2, ""},
      {"output tok/s incl. failed requests' streamed tokens", [](const Summary& s) { return s.output_tok_s_all; }, 1, 2,
       "", false, true},
      {"median TTFT", [](const Summary& s) { return s.ttft_p50; }, 1, 2, " s"},
      {"p90 TTFT", [](const Summary& s) { return s.ttft_p90; }, 1, 2, " s"},
      {"p90 TTFT incl. failed requests", [](const Summary& s) { return s.ttft_p90_all; }, 1, 2, " s", false, true},
      {"median end-to-end request latency", [](const Summary& s) { return s.e2e_p50; }, 1, 2, " s"},
      {"median interactivity (tok/s per user)", [](const Summary& s) { return s.interactivity_p50; }, 1, 2, ""},
      {"overall cache reuse", [](const Summary& s) { return s.cache_reuse; }, 100, 1, "%"},
      {"ideal reuse (unlimited cache)", [](const Summary& s) { return s.ideal_reuse; }, 100, 1, "%"},
      {"reuse / ideal", [](const Summary& s) { return s.reuse_of_ideal; }, 100, 1, "%"},
      {"P90 E2E-normalized interactivity", [](const Summary& s) { return s.p90_e2e_norm_interactivity; }, 1, 2, ""},
      {"cached on device tier", [](const Summary& s) { return s.tier_device; }, 100, 1, "%", true},
      {"cached on host tier", [](const Summary& s) { return s.tier_host; }, 100, 1, "%", true},
      {"cached on disk tier", [](const Summary& s) { return s.tier_disk; }, 100, 1, "%", true},
      {"cost, $ per M output tokens", [](const Summary& s) { return s.cost_per_mtok; }, 1, 3, "", true},
      {"speculative: draft acceptance rate",
       [](const Summary& s) { return s.spec ? s.spec->total.AcceptanceRate() : std::nullopt; }, 100, 1, "%", true},
      {"speculative: mean accepted length (tokens/step)",
       [](const Summary& s) { return s.spec ? s.spec->total.MeanAcceptedLength() : std::nullopt; }, 1, 2, "", true},
  };
  std::string out = "| metric |";
  std::string sep = "|---|";
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string label = runs[i].label.empty() ? fmt::format("run {}", i + 1) : runs[i].label;
    out += " " + label + " |";
    sep += "---|";
  }
  out += "\n" + sep + "\n";
  bool failures = false;
  for (const Summary& s : runs) failures |= s.failed > 0;
  for (const Row& row : kRows) {
    bool any = false;
    for (const Summary& s : runs) any |= row.get(s).has_value();
    if (!any && row.optional) continue;
    if (row.with_failures && !failures) continue;
    out += fmt::format("| {} |", row.name);
    for (size_t i = 0; i < runs.size(); ++i) {
      std::string cell = Cell(row, runs[i]);
      auto a = row.get(runs[0]);
      auto b = row.get(runs[i]);
      if (i > 0 && a && b && *a != 0) cell += fmt::format(" ({:.2f}x)", *b / *a);
      out += " " + cell + " |";
    }
    out += "\n";
  }
  out += "| completed / failed requests |";
  for (const Summary& s : runs) out += fmt::format(" {} / {} |", s.completed, s.failed);
  out += "\n";
  return out;
}

nlohmann::json KvAccountingFromMetrics(const std::string& metrics_text) {
  nlohmann::json out = nlohmann::json::object();
  ForEachLabelledSample(metrics_text, [&](const LabelledSample& s) {
    if (s.name == "prosgrow_prompt_tokens_missed_total") {
      out["miss_reasons"][LabelValue(s.line, "reason")] = s.value;
    } else if (s.name == "prosgrow_kv_whatif_hit_ratio") {
      out["whatif"].push_back({{"tier", LabelValue(s.line, "tier")},
                               {"extra_gib", std::strtod(LabelValue(s.line, "extra_gib").c_str(), nullptr)},
                               {"hit_ratio", s.value}});
    }
  });
  return out;
}

std::string KvAccountingTable(const nlohmann::json& a) {
  std::string md;
  if (a.contains("miss_reasons")) {
    double total = 0;
    for (const auto& [reason, v] : a["miss_reasons"].items()) total += v.get<double>();
    md += "| prompt tokens missed, by reason | tokens | share |\n|---|---|---|\n";
    for (const auto& [reason, v] : a["miss_reasons"].items()) {
      md += fmt::format("| {} | {:.0f} | {:.1f}% |\n", reason, v.get<double>(),
                        total > 0 ? 100 * v.get<double>() / total : 0.0);
    }
  }
  if (a.contains("whatif")) {
    if (!md.empty()) md += "\n";
    md += "| KV hit ratio if the tier had more (ghost estimate; +0 = measured) | tier | hit ratio |\n|---|---|---|\n";
    for (const auto& p : a["whatif"]) {
      md += fmt::format("| +{} GiB | {} | {:.3f} |\n", p["extra_gib"].get<double>(), p["tier"].get<std::string>(),
                        p["hit_ratio"].get<double>());
    }
  }
  return md;
}

}  // namespace pg::bench
