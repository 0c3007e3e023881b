#include "eval/eval_report.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "base/enum_names.h"

namespace pg {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "prosgrow-eval-results";
constexpr int kVersion = 1;

std::string Percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

// Markdown table cells: one line, pipes escaped, length capped.
std::string Cell(std::string_view text, size_t max_len = 80) {
  std::string out;
  for (char c : text.substr(0, std::min(text.size(), max_len))) {
    if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  if (text.size() > max_len) out += "...";
  return out;
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(fmt::format("cannot write {}", path.string()));
  out << text;
  out.close();
  if (!out) return IoError(fmt::format("error writing {}", path.string()));
  return Status::Ok();
}

// The count of each verdict in a StyleSummary, by Verdict.
constexpr int StyleSummary::*kVerdictCounts[] = {&StyleSummary::correct, &StyleSummary::wrong, &StyleSummary::no_answer,
                                                 &StyleSummary::failed};
static_assert(std::size(kVerdictCounts) == static_cast<size_t>(Verdict::kFailed) + 1);

constexpr const char* kVerdictNames[] = {"correct", "wrong", "no_answer", "failed"};  // by Verdict

}  // namespace

const char* VerdictName(Verdict verdict) { return EnumName(verdict, kVerdictNames); }

Result<Verdict> ParseVerdict(std::string_view name) {
  if (const auto v = EnumFromName<Verdict>(name, kVerdictNames)) return *v;
  return InvalidArgument(fmt::format("unknown verdict \"{}\"", name));
}

void GradeCompletion(const std::string& output, QuestionResult* result) {
  result->output = output;
  result->extracted = ExtractAnswer(output);
  if (!result->extracted) {
    result->verdict = Verdict::kNoAnswer;
  } else if (AnswersEqual(result->extracted->number.value, result->reference.value)) {
    result->verdict = Verdict::kCorrect;
  } else {
    result->verdict = Verdict::kWrong;
  }
}

StyleSummary Summarize(const EvalReport& report, PromptStyle style) {
  StyleSummary s;
  for (const QuestionResult& r : report.results) {
    if (r.style != style) continue;
    ++s.total;
    ++(s.*kVerdictCounts[static_cast<size_t>(r.verdict)]);
  }
  return s;
}

json ReportToJson(const EvalReport& report) {
  const EvalSettings& st = report.settings;
  json out;
  out["format"] = kFormat;
  out["version"] = kVersion;
  out["settings"] = {{"url", st.url},
                     {"model", st.model},
                     {"endpoint", st.endpoint},
                     {"dataset", st.dataset},
                     {"limit", st.limit},
                     {"max_tokens", st.max_tokens},
                     {"temperature", st.temperature},
                     {"concurrency", st.concurrency},
                     {"wall_s", st.wall_s}};
  out["styles"] = json::array();
  out["summary"] = json::object();
  for (PromptStyle style : report.styles) {
    out["styles"].push_back(PromptStyleName(style));
    StyleSummary s = Summarize(report, style);
    out["summary"][PromptStyleName(style)] = {{"total", s.total},   {"correct", s.correct},
                                              {"wrong", s.wrong},   {"no_answer", s.no_answer},
                                              {"failed", s.failed}, {"accuracy", s.accuracy()}};
  }
  json results = json::array();
  for (const QuestionResult& r : report.results) {
    json j;
    j["index"] = r.index;
    j["style"] = PromptStyleName(r.style);
    j["question"] = r.question;
    j["prompt"] = r.prompt;
    j["output"] = r.output;
    if (r.extracted) {
      j["extracted"] = r.extracted->number.text;
      // JSON has no infinity: a number too large for a double is written as null.
      if (std::isfinite(r.extracted->number.value)) {
        j["extracted_value"] = r.extracted->number.value;
      } else {
        j["extracted_value"] = nullptr;
      }
      j["extraction_rule"] = ExtractionRuleName(r.extracted->rule);
    } else {
      j["extracted"] = nullptr;
      j["extracted_value"] = nullptr;
      j["extraction_rule"] = nullptr;
    }
    j["reference"] = r.reference.text;
    j["reference_value"] = r.reference.value;
    j["verdict"] = VerdictName(r.verdict);
    j["finish_reason"] = r.finish_reason;
    j["completion_tokens"] = r.completion_tokens;
    j["latency_s"] = r.latency_s;
    j["error"] = r.error;
    results.push_back(std::move(j));
  }
  out["results"] = std::move(results);
  return out;
}

Result<EvalReport> ReportFromJson(const json& in, const std::string& source) {
  // nlohmann's typed getters throw on a type mismatch; keep that inside here.
  try {
    if (!in.is_object() || in.value("format", "") != kFormat) {
      return InvalidArgument(fmt::format("{}: not a prosgrow eval results file", source));
    }
    if (in.value("version", 0) != kVersion) {
      return InvalidArgument(fmt::format("{}: unsupported results version {}", source, in.value("version", 0)));
    }
    EvalReport report;
    const json& st = in.at("settings");
    report.settings.url = st.value("url", "");
    report.settings.model = st.value("model", "");
    report.settings.endpoint = st.value("endpoint", "");
    report.settings.dataset = st.value("dataset", "");
    report.settings.limit = st.value("limit", 0);
    report.settings.max_tokens = st.value("max_tokens", 0);
    report.settings.temperature = st.value("temperature", 0.0);
    report.settings.concurrency = st.value("concurrency", 1);
    report.settings.wall_s = st.value("wall_s", 0.0);
    for (const json& name : in.at("styles")) {
      PG_ASSIGN_OR_RETURN(PromptStyle style, ParsePromptStyle(name.get<std::string>()));
      report.styles.push_back(style);
    }
    size_t i = 0;
    for (const json& j : in.at("results")) {
      auto bad = [&](std::string_view why) {
        return InvalidArgument(fmt::format("{}: results[{}]: {}", source, i, why));
      };
      QuestionResult r;
      r.index = j.at("index").get<int>();
      Result<PromptStyle> style = ParsePromptStyle(j.at("style").get<std::string>());
      if (!style.ok()) return bad(style.status().message());
      r.style = *style;
      r.question = j.at("question").get<std::string>();
      r.prompt = j.value("prompt", "");
      r.output = j.at("output").get<std::string>();
      if (!j.at("extracted").is_null()) {
        Extraction e;
        e.number.text = j.at("extracted").get<std::string>();
        const json& value = j.at("extracted_value");
        e.number.value = value.is_null() ? std::numeric_limits<double>::infinity() : value.get<double>();
        e.rule = j.value("extraction_rule", "") == "answer_phrase" ? ExtractionRule::kAnswerPhrase
                                                                   : ExtractionRule::kLastNumber;
        r.extracted = std::move(e);
      }
      r.reference.text = j.at("reference").get<std::string>();
      r.reference.value = j.at("reference_value").get<double>();
      Result<Verdict> verdict = ParseVerdict(j.at("verdict").get<std::string>());
      if (!verdict.ok()) return bad(verdict.status().message());
      r.verdict = *verdict;
      r.finish_reason = j.value("finish_reason", "");
      r.completion_tokens = j.value("completion_tokens", -1);
      r.latency_s = j.value("latency_s", 0.0);
      r.error = j.value("error", "");
      report.results.push_back(std::move(r));
      ++i;
    }
    return report;
  } catch (const json::exception& e) {
    return InvalidArgument(fmt::format("{}: malformed results: {}", source, e.what()));
  }
}

std::string FormatAccuracyLines(const EvalReport& report) {
  std::string out;
  for (PromptStyle style : report.styles) {
    StyleSummary s = Summarize(report, style);
    out += fmt::format("{:<5} prompts: accuracy {} ({} of {} correct; {} wrong, {} no answer; {} failed requests)\n",
                       PromptStyleName(style), Percent(s.accuracy()), s.correct, s.answered(), s.wrong, s.no_answer,
                       s.failed);
  }
  return out;
}

std::string FormatSummaryMarkdown(const EvalReport& report) {
  const EvalSettings& st = report.settings;
  std::string md = "# prosgrow eval\n\n";
  md += fmt::format("- server: `{}` ({} endpoint), model: `{}`\n", st.url, st.endpoint,
                    st.model.empty() ? "(server default)" : st.model);
  md += fmt::format("- dataset: `{}`, {} questions per style\n", st.dataset, st.limit);
  md += fmt::format("- max tokens {}, temperature {}, concurrency {}, wall time {:.1f} s\n\n", st.max_tokens,
                    st.temperature, st.concurrency, st.wall_s);
  md += "| prompts | accuracy | correct | wrong | no answer | failed | total |\n";
  md += "|---|---|---|---|---|---|---|\n";
  for (PromptStyle style : report.styles) {
    StyleSummary s = Summarize(report, style);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", PromptStyleName(style), Percent(s.accuracy()),
                      s.correct, s.wrong, s.no_answer, s.failed, s.total);
  }
  md += "\nAccuracy = correct / (correct + wrong + no answer); failed requests are not counted.\n";

  bool any_miss = false;
  for (const QuestionResult& r : report.results) any_miss = any_miss || r.verdict != Verdict::kCorrect;
  if (any_miss) {
    md += "\n## Questions not answered correctly\n\n";
    md += "| prompts | index | verdict | extracted | reference | finish | detail |\n";
    md += "|---|---|---|---|---|---|---|\n";
    for (const QuestionResult& r : report.results) {
      if (r.verdict == Verdict::kCorrect) continue;
      std::string detail =
          r.verdict == Verdict::kFailed ? r.error : r.output.substr(r.output.size() > 60 ? r.output.size() - 60 : 0);
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", PromptStyleName(r.style), r.index,
                        VerdictName(r.verdict), r.extracted ? r.extracted->number.text : "-", r.reference.text,
                        Cell(r.finish_reason), Cell(detail));
    }
  }
  return md;
}

Status WriteReport(const EvalReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("cannot create directory {}: {}", dir, ec.message()));
  std::filesystem::path base(dir);
  PG_RETURN_IF_ERROR(
      WriteFile(base / "results.json",
                ReportToJson(report).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  PG_RETURN_IF_ERROR(WriteFile(base / "summary.md", FormatSummaryMarkdown(report)));
  return Status::Ok();
}

Result<EvalReport> LoadReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("cannot open {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  json parsed = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidArgument(fmt::format("{}: not valid JSON", path));
  return ReportFromJson(parsed, path);
}

}  // namespace pg
