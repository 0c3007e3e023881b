// CheckGpus (gpu_check.h).
#include "doctor/gpu_check.h"

#include <fmt/format.h>

#include "base/units.h"

namespace pg {

CheckResult CheckGpus(const GpuReport& r) {
  const std::string backends = r.backend == "off" ? "cpu" : "cpu, " + r.backend;
  if (r.backend == "off") {
    return CheckResult::Skip("gpu", fmt::format("no GPU backend compiled (backends: {}; build with "
                                                "-DPROSGROW_GPU=cuda|hip|emulated for one)",
                                                backends));
  }
  std::string versions = fmt::format("runtime {}", r.runtime_version.empty() ? "?" : r.runtime_version);
  if (!r.driver_version.empty()) versions = fmt::format("driver {}, {}", r.driver_version, versions);
  if (r.devices.empty()) {
    return CheckResult::Skip("gpu", fmt::format("no GPU found (backends: {}; {}; {})", backends, versions,
                                                r.error.empty() ? "no device" : r.error));
  }
  std::string list;
  for (const GpuDevice& d : r.devices) {
    list += fmt::format("{}{}: {}{} {} ({} free)", list.empty() ? "" : "; ", d.index, d.name,
                        d.arch.empty() ? "" : " " + d.arch, FormatBytes(d.total_bytes), FormatBytes(d.free_bytes));
  }
  return CheckResult::Ok("gpu", fmt::format("{} GPU{} (backends: {}; {}): {}", r.devices.size(),
                                            r.devices.size() == 1 ? "" : "s", backends, versions, list));
}

}  // namespace pg
