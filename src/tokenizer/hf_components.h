// tokenizer.json's normalizer, pre_tokenizer, decoder and post_processor
// sections -> HfPipeline steps. Every type not listed in hf_tokenizer.h is
// refused by name. Private to src/tokenizer.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/status.h"
#include "tokenizer/hf_pipeline.h"

namespace pg {

// j[key] by reference (no copy of a large subtree); null when j is not an
// object or has no such key.
inline const nlohmann::json& Field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

Status ParseNormalizer(const nlohmann::json& j, std::vector<HfNormalizer>* out);
Status ParsePreTokenizer(const nlohmann::json& j, std::vector<HfPreTokenizer>* out);
Status ParseDecoder(const nlohmann::json& j, std::vector<HfDecoder>* out);

// What the post-processor adds around a single sequence.
struct HfPostProcess {
  std::optional<int32_t> bos_id;  // a special token before $A
  std::optional<int32_t> eos_id;  // a special token after $A
};
Status ParsePostProcessor(const nlohmann::json& j, HfPostProcess* out);

}  // namespace pg
