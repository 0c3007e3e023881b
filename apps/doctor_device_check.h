// doctor's device lines: in a build with the device executor, one line per
// GPU the backend sees, from a tiny synthetic model (make-model tiny, qwen3,
// Q8_0, written under the temp dir and removed) run through the device
// executor and the CPU's precise forward pass (gpu::CompareWithCpu): ok when
// the logits agree within kDoctorDeviceTolerance and every greedy token is
// the same. A build without the device executor adds no line (the gpu line
// names the compiled backends).
#pragma once

#include <vector>

#include "doctor/check.h"
#include "gpu/device_info.h"

namespace pg {

// Normalised error allowed between the device's logits and the CPU's:
// measured 4.9e-8 on this model with f16 KV (the device rounds q to f16
// before q.k; the CPU's precise mode does not), emulated.
inline constexpr double kDoctorDeviceTolerance = 1e-6;

std::vector<CheckResult> CheckDevicesAgainstCpu(const GpuReport& report);

}  // namespace pg
