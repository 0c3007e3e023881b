// SpecConfig: the speculative-decoding flags (--spec, --spec-draft-max,
// --spec-draft-model, --spec-synthetic-acceptance-length) as one value.
// Plain value type.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

enum class DrafterKind {
  kNgram,   // prompt lookup over the sequence's own context (NgramIndex)
  kSuffix,  // suffix decoding over recent requests (SuffixCache)
  kDraft,   // a small draft model (--spec-draft-model)
  kMtp,     // the model's own NextN (multi-token prediction) layer
};

const char* DrafterName(DrafterKind k);

enum class SpecPolicy { kGoodput, kAlways };

// "goodput" | "always".
Result<SpecPolicy> ParseSpecPolicy(const std::string& name);

struct SpecConfig {
  std::vector<DrafterKind> drafters;  // tried in order each step; empty = speculation off
  int draft_max = 4;                  // K: most draft tokens per step
  std::string draft_model;            // GGUF for kDraft
  double synthetic_length = 0;        // > 0: benchmark-only synthetic acceptance of mean length L
  // --spec-max-batch: speculate only in steps where at most this many
  // sequences run and none is still prefilling (0 = always). Verification
  // turns each decoding row into 1 + K rows; on a CPU whose cores a batch
  // already keeps busy, those rows cost about what they save.
  int max_batch = 0;
  // --spec-policy: kGoodput verifies, each step, only the draft positions
  // whose expected tokens are worth their measured cost (VerifyPlanner);
  // kAlways verifies every proposed draft token.
  SpecPolicy policy = SpecPolicy::kGoodput;
  bool enabled() const { return !drafters.empty(); }
  bool synthetic() const { return synthetic_length > 0; }
};

// "none" | a comma list of ngram, suffix, draft, mtp (each at most once).
Result<std::vector<DrafterKind>> ParseDrafterList(const std::string& list);
// Checks the combination: draft_max in [1, 64], a draft model exactly when
// kDraft is listed, not both kDraft and kMtp (one model drafter a step), the synthetic length in [1, K + 1] and only
// with a drafter.
Status ValidateSpecConfig(const SpecConfig& c);

}  // namespace pg
