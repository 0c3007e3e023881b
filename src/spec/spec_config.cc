#include "spec/spec_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/enum_names.h"
#include "spec/synthetic_acceptance.h"

namespace pg {
namespace {

constexpr const char* kDrafterNames[] = {"ngram", "suffix", "draft", "mtp"};  // by DrafterKind

}  // namespace

const char* DrafterName(DrafterKind k) { return EnumName(k, kDrafterNames); }

Result<std::vector<DrafterKind>> ParseDrafterList(const std::string& list) {
  std::vector<DrafterKind> out;
  if (list.empty() || list == "none") return out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    const std::optional<DrafterKind> k = EnumFromName<DrafterKind>(name, kDrafterNames);
    if (!k)
      return InvalidArgument(
          fmt::format("--spec: unknown drafter '{}' (none | ngram | suffix | draft | mtp, several joined "
                      "with commas)",
                      name));
    if (std::find(out.begin(), out.end(), *k) != out.end())
      return InvalidArgument(fmt::format("--spec: drafter '{}' listed twice", name));
    out.push_back(*k);
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
  if (wants_draft && std::find(c.drafters.begin(), c.drafters.end(), DrafterKind::kMtp) != c.drafters.end())
    return InvalidArgument("--spec: 'draft' and 'mtp' cannot both be listed (one model drafter)");
  if (c.synthetic_length != 0) {
    if (!c.enabled())
      return InvalidArgument("--spec-synthetic-acceptance-length needs a drafter (--spec ngram|suffix|draft|mtp)");
    PG_RETURN_IF_ERROR(SolveConditionalAcceptance(c.synthetic_length, c.draft_max).status());
  }
  return Status::Ok();
}

}  // namespace pg
