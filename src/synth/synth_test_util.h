// Private test helper for the synth tests.
#pragma once

#include <map>
#include <string>

#include "synth/model_plan.h"

namespace pg::testing {

// The plan's tensors by name.
inline std::map<std::string, const PlannedTensor*> TensorsByName(const ModelPlan& p) {
  std::map<std::string, const PlannedTensor*> m;
  for (const auto& t : p.tensors) m[t.name] = &t;
  return m;
}

}  // namespace pg::testing
