#include "bench/reference_points.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/run_report.h"

namespace pg::bench {
namespace {

// Splits one CSV line; false on an unterminated quote.
bool SplitCsv(const std::string& line, std::vector<std::string>* out) {
  out->clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out->push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out->push_back(cur);
  return !quoted;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

}  // namespace

Result<std::vector<ReferencePoint>> ParseReferenceCsv(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> cells;
  std::map<std::string, size_t> col;
  int64_t lineno = 0;
  std::vector<ReferencePoint> out;
  while (std::getline(in, line)) {
    ++lineno;
    if (Trim(line).empty()) continue;
    if (!SplitCsv(line, &cells)) return Corrupt(fmt::format("{} line {}: unterminated quote", name, lineno));
    if (col.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) col[Trim(cells[i])] = i;
      if (!col.count("label") || !col.count("output_tok_s_gpu")) {
        return Corrupt(name + ": header must name at least 'label' and 'output_tok_s_gpu'");
      }
      continue;
    }
    ReferencePoint p;
    auto text_at = [&](const char* key) -> std::string {
      auto it = col.find(key);
      return it != col.end() && it->second < cells.size() ? Trim(cells[it->second]) : "";
    };
    auto num_at = [&](const char* key, std::optional<double>* v) -> Status {
      std::string t = text_at(key);
      if (t.empty()) return Status::Ok();
      char* end = nullptr;
      double d = std::strtod(t.c_str(), &end);
      if (end != t.c_str() + t.size() || !std::isfinite(d)) {
        return Corrupt(fmt::format("{} line {}: '{}' is not a number in column {}", name, lineno, t, key));
      }
      *v = d;
      return Status::Ok();
    };
    p.label = text_at("label");
    p.hardware = text_at("hardware");
    p.model = text_at("model");
    p.source = text_at("source");
    PG_RETURN_IF_ERROR(num_at("concurrency", &p.concurrency));
    PG_RETURN_IF_ERROR(num_at("output_tok_s_gpu", &p.output_tok_s_gpu));
    PG_RETURN_IF_ERROR(num_at("interactivity", &p.interactivity));
    PG_RETURN_IF_ERROR(num_at("ttft_p50", &p.ttft_p50));
    PG_RETURN_IF_ERROR(num_at("ttft_p90", &p.ttft_p90));
    PG_RETURN_IF_ERROR(num_at("e2e_p50", &p.e2e_p50));
    PG_RETURN_IF_ERROR(num_at("cost_per_mtok", &p.cost_per_mtok));
    out.push_back(std::move(p));
  }
  if (col.empty()) return Corrupt(name + ": empty reference CSV");
  return out;
}

Result<std::vector<ReferencePoint>> LoadReferenceCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read reference CSV " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseReferenceCsv(ss.str(), path);
}

std::string ReferenceTable(const std::vector<Summary>& measured, const std::vector<ReferencePoint>& refs) {
  std::string o =
      "| reference | hardware | conc. | tok/s/GPU ref | measured | measured/ref | interactivity ref | measured | "
      "TTFT p50 ref | measured | TTFT p90 ref | measured | E2E p50 ref | measured | $/Mtok ref | measured |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  if (measured.empty()) return o;
  for (const ReferencePoint& r : refs) {
    const Summary* m = &measured.back();
    for (const Summary& s : measured) {
      if (r.concurrency && s.concurrency == static_cast<int32_t>(*r.concurrency)) m = &s;
    }
    std::string ratio = "n/a";
    if (r.output_tok_s_gpu && m->output_tok_s_gpu && *r.output_tok_s_gpu > 0) {
      ratio = fmt::format("{:.3g}x", *m->output_tok_s_gpu / *r.output_tok_s_gpu);
    }
    o += fmt::format("| {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                     r.label, r.hardware, r.concurrency ? fmt::format("{:g}", *r.concurrency) : "",
                     FormatOpt(r.output_tok_s_gpu, 2), FormatOpt(m->output_tok_s_gpu, 2), m->label, ratio,
                     FormatOpt(r.interactivity, 1), FormatOpt(m->interactivity_p50, 1), FormatOpt(r.ttft_p50, 2),
                     FormatOpt(m->ttft_p50, 2), FormatOpt(r.ttft_p90, 2), FormatOpt(m->ttft_p90, 2),
                     FormatOpt(r.e2e_p50, 2), FormatOpt(m->e2e_p50, 2), FormatOpt(r.cost_per_mtok, 3),
                     FormatOpt(m->cost_per_mtok, 3));
  }
  return o;
}

}  // namespace pg::bench
