#include "spec/spec_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "spec/synthetic_acceptance.h"

namespace pg {

const char* DrafterName(DrafterKind k) {
  switch (k) {
    case DrafterKind::kNgram: return "ngram";
    case DrafterKind::kSuffix: return "suffix";
    case DrafterKind::kDraft: return "draft";
  }
  return "?";
}

Result<std::vector<DrafterKind>> ParseDrafterList(const std::string& list) {
  std::vector<DrafterKind> out;
  if (list.empty() || list == "none") return out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    DrafterKind k;
    if (name == "ngram") k = DrafterKind::kNgram;
    else if (name == "suffix") k = DrafterKind::kSuffix;
    else if (name == "draft") k = DrafterKind::kDraft;
    else
      return InvalidArgument(fmt::format("--spec: unknown drafter '{}' (none | ngram | suffix | draft, several joined "
                                         "with commas)",
                                         name));
    if (std::find(out.begin(), out.end(), k) != out.end())
      return InvalidArgument(fmt::format("--spec: drafter '{}' listed twice", name));
    out.push_back(k);
    start = comma + 1;
  }
  return out;
}

Result<SpecPolicy> ParseSpecPolicy(const std::string& name) {
  if (name == "goodput") return SpecPolicy::kGoodput;
  if (name == "always") return SpecPolicy::kAlways;
  return InvalidArgument(fmt::format("--spec-policy: unknown policy '{}' (goodput | always)", name));
}

Status ValidateSpecConfig(const SpecConfig& c) {
  if (c.draft_max < 1 || c.draft_max > 64)
    return InvalidArgument(fmt::format("--spec-draft-max must be in [1, 64] (got {})", c.draft_max));
  if (c.max_batch < 0) return InvalidArgument(fmt::format("--spec-max-batch must be >= 0 (got {})", c.max_batch));
  const bool wants_draft = std::find(c.drafters.begin(), c.drafters.end(), DrafterKind::kDraft) != c.drafters.end();
  if (wants_draft && c.draft_model.empty()) return InvalidArgument("--spec draft needs --spec-draft-model FILE");
  if (!wants_draft && !c.draft_model.empty())
    return InvalidArgument("--spec-draft-model is set but --spec does not list 'draft'");
  if (c.synthetic_length != 0) {
    if (!c.enabled())
      return InvalidArgument("--spec-synthetic-acceptance-length needs a drafter (--spec ngram|suffix|draft)");
    PG_RETURN_IF_ERROR(SolveConditionalAcceptance(c.synthetic_length, c.draft_max).status());
  }
  return Status::Ok();
}

}  // namespace pg
