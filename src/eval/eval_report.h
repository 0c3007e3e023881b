// EvalReport: the outcome of one `prosgrow eval` run: the settings, and one
// QuestionResult per (question, prompt style). It is written as results.json
// (the input of `prosgrow eval compare`) and summarized as summary.md.
//
// Verdicts: a question is "correct" when the extracted answer equals the
// reference numerically, "wrong" when it differs, "no_answer" when the
// completion holds no number, and "failed" when the request itself failed
// (transport error, HTTP error, malformed reply). Accuracy is
// correct / (correct + wrong + no_answer): failed requests are reported
// separately and never counted as wrong answers.
//
// Thread-safety: plain values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "eval/answer_extraction.h"
#include "eval/prompt_builder.h"

namespace pg {

enum class Verdict { kCorrect, kWrong, kNoAnswer, kFailed };
const char* VerdictName(Verdict verdict);  // "correct", "wrong", "no_answer", "failed"
Result<Verdict> ParseVerdict(std::string_view name);

struct QuestionResult {
  int index = 0;  // row index in the dataset
  PromptStyle style = PromptStyle::kShort;
  std::string question;
  std::string prompt;  // the exact text sent
  std::string output;  // raw completion ("" when failed)
  std::optional<Extraction> extracted;
  ExtractedNumber reference;
  Verdict verdict = Verdict::kFailed;
  std::string finish_reason;
  int completion_tokens = -1;  // -1 when the server did not say
  double latency_s = 0;
  std::string error;  // set when verdict == kFailed
};

struct StyleSummary {
  int total = 0;
  int correct = 0;
  int wrong = 0;
  int no_answer = 0;
  int failed = 0;
  int answered() const { return correct + wrong + no_answer; }
  // correct / answered, or 0 when nothing was answered.
  double accuracy() const { return answered() > 0 ? static_cast<double>(correct) / answered() : 0.0; }
};

// Settings recorded with the results (informational; compare checks questions).
struct EvalSettings {
  std::string url;
  std::string model;
  std::string endpoint;  // "chat" / "completions"
  std::string dataset;
  int limit = 0;  // questions per style actually used
  int max_tokens = 0;
  double temperature = 0;
  int concurrency = 1;
  double wall_s = 0;  // duration of the whole run
};

struct EvalReport {
  EvalSettings settings;
  std::vector<PromptStyle> styles;      // in run order
  std::vector<QuestionResult> results;  // grouped by style, then by index
};

// Grades one completion against the reference.
void GradeCompletion(const std::string& output, QuestionResult* result);

StyleSummary Summarize(const EvalReport& report, PromptStyle style);

nlohmann::json ReportToJson(const EvalReport& report);
Result<EvalReport> ReportFromJson(const nlohmann::json& json, const std::string& source);

// Markdown summary: settings, accuracy per style, failures and wrong answers.
std::string FormatSummaryMarkdown(const EvalReport& report);
// A few lines for the terminal: accuracy per style.
std::string FormatAccuracyLines(const EvalReport& report);

// Writes DIR/results.json and DIR/summary.md, creating DIR if needed.
Status WriteReport(const EvalReport& report, const std::string& dir);
Result<EvalReport> LoadReport(const std::string& results_json_path);

}  // namespace pg
