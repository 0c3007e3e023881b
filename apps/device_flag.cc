#include "device_flag.h"

#include <fmt/format.h>

#include <cctype>

#include "gpu/device_info.h"
#ifdef PROSGROW_DEVICE_EXECUTOR
#include "gpu/executor/device_backend.h"
#endif

namespace pg {
namespace {

// -1: not cuda[:N]; else the device ordinal (0 for plain "cuda").
int CudaOrdinal(const std::string& device) {
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) != 0 || device.size() <= 5 || device.size() > 9) return -1;
  for (size_t i = 5; i < device.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(device[i]))) return -1;
  return std::stoi(device.substr(5));
}

}  // namespace

void AddDeviceFlag(CLI::App& app, std::string* device) {
  app.add_option("--device", *device,
                 "executor of the forward pass: cpu (default) | cuda[:N] (the device executor; needs a build with "
                 "-DPROSGROW_GPU=cuda|hip|emulated and a device)");
}

Status ApplyDeviceFlag(const std::string& device, EngineConfig* c) {
  if (device == "cpu") return Status::Ok();
  const int ordinal = CudaOrdinal(device);
  if (ordinal < 0) return InvalidArgument(fmt::format("--device: expected cpu, cuda or cuda:N (got '{}')", device));
#ifdef PROSGROW_DEVICE_EXECUTOR
  return gpu::UseDeviceExecutor(ordinal, c);
#else
  (void)c;
  return InvalidArgument(fmt::format("--device {}: this build has no device executor (GPU backend compiled: {}); build "
                                     "with -DPROSGROW_GPU=cuda, or use --device cpu",
                                     device, CompiledGpuBackend()));
#endif
}

}  // namespace pg
