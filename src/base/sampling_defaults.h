// SamplingDefaults: a model's own default sampling, as a Hugging Face
// directory's generation_config.json gives it (hf/hf_dir.h). The server
// starts each request's sampling from it: a field the request does not set
// takes the model's value, a field it sets wins (vLLM's
// `--generation-config auto`); docs/server.md lists the fields. Unset
// (nullopt) fields keep the server's own defaults.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>

namespace pg {

struct SamplingDefaults {
  std::optional<double> temperature;         // [0, 100]
  std::optional<double> top_p;               // (0, 1]
  std::optional<int64_t> top_k;              // -1 or 0 = off
  std::optional<double> min_p;               // [0, 1]
  std::optional<double> repetition_penalty;  // > 0 (1 = off)

  bool empty() const { return !temperature && !top_p && !top_k && !min_p && !repetition_penalty; }
};

}  // namespace pg
