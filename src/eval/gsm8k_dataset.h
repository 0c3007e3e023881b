// Gsm8kDataset: the rows of a GSM8K-format JSONL file.
//
// Each non-blank line is a JSON object with string fields "question" and
// "answer"; the answer is a worked solution whose last "#### N" gives the
// reference number. Loading is strict: the first malformed line (bad JSON,
// missing/non-string field, no number after "####") fails the whole load with
// "FILE:LINE: reason", because a silently shortened dataset would make
// accuracies of two runs incomparable. Blank lines are skipped.
//
// Thread-safety: immutable after Load; share freely for reading.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "eval/answer_extraction.h"

namespace pg {

struct Gsm8kRow {
  int index = 0;  // 0-based position among the dataset's rows
  std::string question;
  std::string solution;       // the "answer" field as given, with "<<...>>" and "#### N"
  ExtractedNumber reference;  // the number after "#### "
};

class Gsm8kDataset {
 public:
  static Result<Gsm8kDataset> Load(const std::string& path);
  // Parses JSONL text; `source` names it in error messages.
  static Result<Gsm8kDataset> Parse(std::string_view jsonl, const std::string& source);

  const std::vector<Gsm8kRow>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }

 private:
  std::vector<Gsm8kRow> rows_;
};

// A worked solution for few-shot prompts: "<<48/2=24>>" calculator annotations
// removed, the "#### N" line replaced by "The answer is N.".
std::string CleanSolution(const Gsm8kRow& row);

}  // namespace pg
