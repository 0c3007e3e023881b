// Checks of the host a server will run on: the CPU's features and the kernel
// table that will be chosen, RAM against the model and the KV tiers, and the
// disk tier's directory. Each returns one CheckResult; none changes anything
// on the host except a probe file it creates and removes in the disk tier.
// Thread-safety: pure functions of their arguments and the host's state.
#pragma once

#include <cstdint>
#include <string>

#include "doctor/check.h"

namespace pg {

// The CPU's features, the active kernel ISA and what it enables (repacked
// layouts). Warns when the kernels run below what the CPU supports.
CheckResult CheckCpu();

struct MemoryPlan {
  uint64_t model_bytes = 0;      // the GGUF file (mmapped weights)
  uint64_t kv_device_bytes = 0;  // device tier (host RAM on the CPU backend)
  uint64_t kv_host_bytes = 0;    // host tier
};
// `mem_total` / `mem_available`: bytes, as /proc/meminfo reports them
// (ReadMeminfo). Fails when the plan exceeds MemTotal, warns when it
// exceeds MemAvailable.
CheckResult CheckMemory(const MemoryPlan& plan, uint64_t mem_total, uint64_t mem_available);
// MemTotal and MemAvailable from /proc/meminfo; false when unreadable.
bool ReadMeminfo(uint64_t* mem_total, uint64_t* mem_available);

// The disk tier's directory: created if absent (as serve would), writable
// (a probe file is written, synced and removed), free space against
// `cap_bytes`, and what is already in it. Warns when the directory, or
// anything in it, is readable by group or others (block files hold prompt
// token ids). Skip when `dir` is empty.
CheckResult CheckDiskTier(const std::string& dir, uint64_t cap_bytes);

}  // namespace pg
