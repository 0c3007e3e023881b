// CompareReports: baseline vs optimized eval results, per prompt style.
//
// Questions are paired by (style, dataset index); a pair whose question texts
// differ means the runs used different datasets, which is an error. For each
// style present in both runs it reports:
//   - the accuracy of each run;
//   - flips: questions correct in BASE and not correct in OPT (wrong or no
//     answer), and the reverse, by dataset index;
//   - "unverifiable": questions correct in BASE whose OPT request failed;
//   - the identical-output rate: pairs whose completions are byte-identical,
//     over all pairs (a failed request on either side is never identical).
// Differences in generation settings (endpoint, max tokens, temperature, model)
// are listed as warnings: they make the identical-output rate meaningless.
// The gate (--fail-on-flip) fails on any flip to wrong or any unverifiable
// question: a deployment check must not pass on answers it could not see.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "eval/eval_report.h"

namespace pg {

struct StyleComparison {
  PromptStyle style = PromptStyle::kShort;
  StyleSummary base;
  StyleSummary opt;
  int paired = 0;  // questions present in both runs
  int only_in_base = 0;
  int only_in_opt = 0;
  std::vector<int> right_to_wrong;  // dataset indices, ascending
  std::vector<int> wrong_to_right;
  std::vector<int> unverifiable;  // BASE correct, OPT failed
  int identical = 0;              // pairs with byte-identical completions
  double identical_rate() const { return paired > 0 ? static_cast<double>(identical) / paired : 0.0; }
};

struct Comparison {
  std::vector<StyleComparison> styles;           // styles present in both runs, BASE's order
  std::vector<PromptStyle> unmatched_styles;     // in only one of the runs
  std::vector<std::string> setting_differences;  // e.g. "max_tokens: BASE 512, OPT 256"
  // True when any baseline-correct answer became wrong or could not be checked.
  bool HasRegression() const;
};

Result<Comparison> CompareReports(const EvalReport& base, const EvalReport& opt);

// Human-readable report (Markdown) naming the two runs.
std::string FormatComparison(const Comparison& comparison, const std::string& base_name, const std::string& opt_name);

}  // namespace pg
