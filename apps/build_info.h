// What this binary is: version, git commit (at build time, "-dirty" with
// uncommitted changes, "unknown" without a .git), build type, and the CPU
// kernel ISA the runtime dispatch selected on this host. Reported by
// `prosgrow --version`, the serve start-up log line and /metrics
// (prosgrow_build_info). Immutable data; thread-safe.
#pragma once

#include <string>

#include "server/http/server_options.h"

namespace pg {

// Defined in the generated build_info_generated.cc (cmake/build_info.cmake).
extern const char* const kBuildVersion;
extern const char* const kBuildCommit;
extern const char* const kBuildType;

// The facts above plus the active kernel ISA.
BuildInfo ThisBuild();

// "prosgrow 0.1.0 (commit 1a2b3c4d5e6f, Release, isa avx2)".
std::string BuildInfoLine(const BuildInfo& build);

}  // namespace pg
