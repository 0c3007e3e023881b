#include "build_info.h"

#include <fmt/format.h>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/cpu_kernels.h"

namespace pg {

BuildInfo ThisBuild() {
  BuildInfo b;
  b.version = kBuildVersion;
  b.commit = kBuildCommit;
  b.build_type = kBuildType;
  b.isa = IsaName(ActiveKernels().level);
  return b;
}

std::string BuildInfoLine(const BuildInfo& b) {
  return fmt::format("prosgrow {} (commit {}, {}, isa {})", b.version, b.commit, b.build_type, b.isa);
}

}  // namespace pg
