#include "engine/executor.h"

#include <fmt/format.h>

namespace pg {

std::string KvModelIdentity(const std::string& model_identity, const Executor& executor) {
  return fmt::format("{}@{}", model_identity, executor.arithmetic());
}

}  // namespace pg
