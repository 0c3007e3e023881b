#include "device_flag.h"

#include <fmt/format.h>

#include <cctype>

#include "gpu/device_info.h"

namespace pg {

void AddDeviceFlag(CLI::App& app, std::string* device) {
  app.add_option("--device", *device,
                 "executor of the forward pass: cpu (default) | cuda[:N] (not available yet: no device executor)");
}

Status CheckDeviceFlag(const std::string& device) {
  if (device == "cpu") return Status::Ok();
  bool cuda = device == "cuda";
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5) {
    cuda = true;
    for (size_t i = 5; i < device.size(); ++i) cuda = cuda && std::isdigit(static_cast<unsigned char>(device[i]));
  }
  if (!cuda) return InvalidArgument(fmt::format("--device: expected cpu, cuda or cuda:N (got '{}')", device));
  return InvalidArgument(fmt::format("--device {}: no device executor exists yet (the forward pass runs on the "
                                     "CPU; GPU backend compiled: {}); use --device cpu",
                                     device, CompiledGpuBackend()));
}

}  // namespace pg
