// PromptBuilder: turns a GSM8K question into the text sent to the model, in
// one of two styles.
//
//   short: instruction + "Question: Q\nAnswer:"          (zero-shot)
//   long:  instruction + 8 worked examples + "Question: Q\nAnswer:"
//
// The long style's worked examples come from other rows of the same dataset,
// chosen deterministically so the prefix is byte-identical across questions
// (this exercises prefix reuse and KV tiers on the server):
//   primary exemplars  = rows n-9 .. n-2 (file order), i.e. near the end of the
//                        file, so a --limit run over the first rows never
//                        touches them;
//   substitutes        = row n-1, then rows n-10, n-11, ... 0.
// A question whose text equals an exemplar's (its own row, or a duplicate) has
// that exemplar replaced IN PLACE by the first unused substitute, so its prompt
// still shares the prefix up to the replaced slot. A question never appears in
// its own prompt's examples (if a dataset repeats one question so often
// that no substitute is left, that prompt gets fewer examples). Needs at
// least 9 rows.
//
// Thread-safety: immutable after Create; Build may be called concurrently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "eval/gsm8k_dataset.h"

namespace pg {

enum class PromptStyle { kShort, kLong };
const char* PromptStyleName(PromptStyle style);  // "short" / "long"
Result<PromptStyle> ParsePromptStyle(std::string_view name);

class PromptBuilder {
 public:
  static constexpr int kNumExemplars = 8;

  // The dataset must outlive the builder. Fails when long prompts are asked
  // for and the dataset has fewer than kNumExemplars + 1 rows.
  static Result<PromptBuilder> Create(const Gsm8kDataset* dataset, bool need_long);

  std::string Build(PromptStyle style, const Gsm8kRow& row) const;

  // Row indices of the worked examples used in row's long prompt, in order.
  std::vector<int> ExemplarsFor(const Gsm8kRow& row) const;
  // The worked examples shared by every question that is not an exemplar.
  const std::vector<int>& primary_exemplars() const { return primary_; }

 private:
  explicit PromptBuilder(const Gsm8kDataset* dataset) : dataset_(dataset) {}

  const Gsm8kDataset* dataset_;
  std::vector<int> primary_;      // kNumExemplars row indices
  std::vector<int> substitutes_;  // in order of preference
};

}  // namespace pg
