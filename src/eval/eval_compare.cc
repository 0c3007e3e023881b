#include "eval/eval_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace pg {
namespace {

std::string IndexList(const std::vector<int>& indices) {
  if (indices.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < indices.size(); ++i) out += (i ? ", " : "") + std::to_string(indices[i]);
  return out;
}

bool Contains(const std::vector<PromptStyle>& styles, PromptStyle style) {
  return std::find(styles.begin(), styles.end(), style) != styles.end();
}

using QuestionsByIndex = std::map<int, const QuestionResult*>;

// The report's results for one prompt style by question index; `name`
// (BASE or OPT) names the report when a question is there twice.
Result<QuestionsByIndex> ByIndex(const EvalReport& report, PromptStyle style, const char* name) {
  QuestionsByIndex by_index;
  for (const QuestionResult& r : report.results) {
    if (r.style != style) continue;
    if (!by_index.emplace(r.index, &r).second) {
      return InvalidArgument(
          fmt::format("{} has question {} twice for {} prompts", name, r.index, PromptStyleName(style)));
    }
  }
  return by_index;
}

}  // namespace

bool Comparison::HasRegression() const {
  for (const StyleComparison& s : styles) {
    if (!s.right_to_wrong.empty() || !s.unverifiable.empty()) return true;
  }
  return false;
}

Result<Comparison> CompareReports(const EvalReport& base, const EvalReport& opt) {
  Comparison cmp;
  const EvalSettings& bs = base.settings;
  const EvalSettings& os = opt.settings;
  auto differ = [&](const char* name, const auto& b, const auto& o) {
    if (b != o) cmp.setting_differences.push_back(fmt::format("{}: BASE {}, OPT {}", name, b, o));
  };
  differ("endpoint", bs.endpoint, os.endpoint);
  differ("model", bs.model, os.model);
  differ("max_tokens", bs.max_tokens, os.max_tokens);
  differ("temperature", bs.temperature, os.temperature);
  for (PromptStyle style : base.styles) {
    if (!Contains(opt.styles, style)) cmp.unmatched_styles.push_back(style);
  }
  for (PromptStyle style : opt.styles) {
    if (!Contains(base.styles, style)) cmp.unmatched_styles.push_back(style);
  }
  for (PromptStyle style : base.styles) {
    if (!Contains(opt.styles, style)) continue;
    StyleComparison sc;
    sc.style = style;
    sc.base = Summarize(base, style);
    sc.opt = Summarize(opt, style);
    PG_ASSIGN_OR_RETURN(const QuestionsByIndex opt_by_index, ByIndex(opt, style, "OPT"));
    PG_ASSIGN_OR_RETURN(const QuestionsByIndex base_by_index, ByIndex(base, style, "BASE"));
    for (const auto& [index, b] : base_by_index) {
      auto it = opt_by_index.find(index);
      if (it == opt_by_index.end()) {
        ++sc.only_in_base;
        continue;
      }
      const QuestionResult* o = it->second;
      if (b->question != o->question) {
        return InvalidArgument(
            fmt::format("BASE and OPT differ on the text of question {}: were they run on the same dataset?", index));
      }
      ++sc.paired;
      bool base_ok = b->verdict != Verdict::kFailed;
      bool opt_ok = o->verdict != Verdict::kFailed;
      if (base_ok && opt_ok && b->output == o->output) ++sc.identical;
      bool base_right = b->verdict == Verdict::kCorrect;
      bool opt_right = o->verdict == Verdict::kCorrect;
      if (base_right && !opt_ok) {
        sc.unverifiable.push_back(index);
      } else if (base_right && !opt_right) {
        sc.right_to_wrong.push_back(index);
      } else if (base_ok && !base_right && opt_right) {
        sc.wrong_to_right.push_back(index);
      }
    }
    for (const auto& [index, o] : opt_by_index) {
      if (base_by_index.find(index) == base_by_index.end()) ++sc.only_in_opt;
    }
    cmp.styles.push_back(std::move(sc));
  }
  if (cmp.styles.empty()) return InvalidArgument("BASE and OPT have no prompt style in common");
  return cmp;
}

std::string FormatComparison(const Comparison& cmp, const std::string& base_name, const std::string& opt_name) {
  std::string out = fmt::format("# prosgrow eval compare\n\nBASE: {}\nOPT:  {}\n", base_name, opt_name);
  for (const std::string& d : cmp.setting_differences) {
    out += fmt::format("\nwarning: the runs used different settings ({}); outputs are not comparable\n", d);
  }
  for (const StyleComparison& s : cmp.styles) {
    out += fmt::format("\n## {} prompts ({} questions paired)\n\n", PromptStyleName(s.style), s.paired);
    out += fmt::format("- accuracy: BASE {:.1f}% ({}/{}, {} failed), OPT {:.1f}% ({}/{}, {} failed)\n",
                       100 * s.base.accuracy(), s.base.correct, s.base.answered(), s.base.failed,
                       100 * s.opt.accuracy(), s.opt.correct, s.opt.answered(), s.opt.failed);
    out += fmt::format("- flips right -> wrong: {} [{}]\n", s.right_to_wrong.size(), IndexList(s.right_to_wrong));
    out += fmt::format("- flips wrong -> right: {} [{}]\n", s.wrong_to_right.size(), IndexList(s.wrong_to_right));
    out += fmt::format("- BASE right, OPT request failed: {} [{}]\n", s.unverifiable.size(), IndexList(s.unverifiable));
    out += fmt::format("- identical outputs: {:.1f}% ({}/{})\n", 100 * s.identical_rate(), s.identical, s.paired);
    if (s.only_in_base > 0 || s.only_in_opt > 0) {
      out += fmt::format("- unpaired questions: {} only in BASE, {} only in OPT\n", s.only_in_base, s.only_in_opt);
    }
  }
  for (PromptStyle style : cmp.unmatched_styles) {
    out += fmt::format("\n{} prompts are in only one of the runs; not compared.\n", PromptStyleName(style));
  }
  out += fmt::format("\nverdict: {}\n", cmp.HasRegression()
                                            ? "REGRESSION (a baseline-correct answer is wrong or unchecked in OPT)"
                                            : "no baseline-correct answer was lost");
  return out;
}

}  // namespace pg
