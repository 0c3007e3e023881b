// The `gpu` line of `prosgrow doctor`: the compiled backends and the GPUs the
// compiled GPU backend sees (count, names, memory, driver and runtime
// versions), from a GpuReport (gpu/device_info.h). No GPU is never a failure
// (prosgrow runs on the CPU): the line says so, as a skip. Pure function.
#pragma once

#include "doctor/check.h"
#include "gpu/device_info.h"

namespace pg {

CheckResult CheckGpus(const GpuReport& report);

}  // namespace pg
