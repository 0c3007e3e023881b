#include "eval/prompt_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "base/check.h"
#include "base/enum_names.h"
#include "eval/enum_flag.h"

namespace pg {
namespace {

constexpr std::string_view kShortInstruction =
    "Solve the following grade-school math problem. Reason step by step, then finish with a "
    "line of the form \"The answer is N.\" where N is the final number alone.\n\n";

constexpr std::string_view kLongInstruction =
    "Solve the following grade-school math problems. Reason step by step, and finish each "
    "solution with a line of the form \"The answer is N.\" where N is the final number alone.\n\n";

constexpr const char* kStyleNames[] = {"short", "long"};  // by PromptStyle

}  // namespace

const char* PromptStyleName(PromptStyle style) { return EnumName(style, kStyleNames); }

Result<PromptStyle> ParsePromptStyle(std::string_view name) {
  return ParseEnumFlag<PromptStyle>(name, kStyleNames, "prompt style");
}

Result<PromptBuilder> PromptBuilder::Create(const Gsm8kDataset* dataset, bool need_long) {
  PromptBuilder builder(dataset);
  const int n = static_cast<int>(dataset->size());
  if (n < kNumExemplars + 1) {
    if (need_long) {
      return InvalidArgument(
          fmt::format("long prompts need a dataset of at least {} rows (8 worked examples + 1 spare), got {}",
                      kNumExemplars + 1, n));
    }
    return builder;
  }
  for (int i = n - kNumExemplars - 1; i < n - 1; ++i) builder.primary_.push_back(i);
  builder.substitutes_.push_back(n - 1);
  for (int i = n - kNumExemplars - 2; i >= 0; --i) builder.substitutes_.push_back(i);
  return builder;
}

std::vector<int> PromptBuilder::ExemplarsFor(const Gsm8kRow& row) const {
  PG_CHECK_MSG(!primary_.empty(), "PromptBuilder created without long prompts");
  const auto& rows = dataset_->rows();
  std::vector<int> chosen = primary_;
  auto is_self = [&](int i) { return i == row.index || rows[i].question == row.question; };
  auto used = [&](int i) { return std::find(chosen.begin(), chosen.end(), i) != chosen.end(); };
  size_t next_sub = 0;
  for (size_t k = 0; k < chosen.size();) {
    if (!is_self(chosen[k])) {
      ++k;
      continue;
    }
    while (next_sub < substitutes_.size() && (is_self(substitutes_[next_sub]) || used(substitutes_[next_sub]))) {
      ++next_sub;
    }
    if (next_sub < substitutes_.size()) {
      chosen[k++] = substitutes_[next_sub++];
    } else {
      // Every other row repeats this question: fewer examples, never itself.
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return chosen;
}

std::string PromptBuilder::Build(PromptStyle style, const Gsm8kRow& row) const {
  std::string out;
  if (style == PromptStyle::kShort) {
    out.append(kShortInstruction);
  } else {
    out.append(kLongInstruction);
    for (int i : ExemplarsFor(row)) {
      const Gsm8kRow& ex = dataset_->rows()[i];
      out += fmt::format("Question: {}\nAnswer: {}\n\n", ex.question, CleanSolution(ex));
    }
  }
  out += fmt::format("Question: {}\nAnswer:", row.question);
  return out;
}

}  // namespace pg
