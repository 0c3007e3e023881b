#include "gpu/executor/device_backend.h"

#include <fmt/format.h>

#include "gpu/executor/device_arena.h"
#include "gpu/executor/device_executor.h"
#include "gpu/executor/pinned_memory.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

Status UseDeviceExecutor(const DeviceOptions& o, EngineConfig* c) {
  const int device = o.device;
  int n = 0;
  const gpuError_t e = gpuGetDeviceCount(&n);
  if (e != gpuSuccess || n <= 0) {
    (void)gpuGetLastError();
    return Unavailable(fmt::format("--device cuda: no GPU device found ({} backend: {}); use --device cpu",
                                   PG_GPU_VENDOR, e != gpuSuccess ? gpuGetErrorString(e) : "0 devices"));
  }
  if (device >= n)
    return InvalidArgument(fmt::format("--device cuda:{}: the machine has {} GPU device(s) (0..{})", device, n, n - 1));
  c->kv_device_arena = DeviceBlockArena::Factory(device);
  c->kv_host_memory = PinnedHostMemory(device);
  c->make_executor = [o](const Model& model, ThreadPool&) -> Result<std::unique_ptr<Executor>> {
    PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceExecutor> x, DeviceExecutor::Create(model, o));
    return std::unique_ptr<Executor>(std::move(x));
  };
  return Status::Ok();
}

}  // namespace pg::gpu
