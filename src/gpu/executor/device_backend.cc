#include "gpu/executor/device_backend.h"

#include <fmt/format.h>

#include "gpu/executor/device_arena.h"
#include "gpu/executor/device_executor.h"
#include "gpu/executor/pinned_memory.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

namespace {

class DeviceBackend final : public Backend {
 public:
  explicit DeviceBackend(const DeviceOptions& o) : o_(o) {}
  std::string name() const override { return fmt::format("cuda:{}", o_.device); }
  Result<std::unique_ptr<Executor>> MakeExecutor(const Model& model, ThreadPool&) const override {
    PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceExecutor> x, DeviceExecutor::Create(model, o_));
    return std::unique_ptr<Executor>(std::move(x));
  }
  Result<std::unique_ptr<BlockArena>> MakeDeviceArena(int64_t n_blocks, size_t block_bytes) const override {
    return DeviceBlockArena::Factory(o_.device)(n_blocks, block_bytes);
  }
  HostMemory host_memory() const override { return PinnedHostMemory(o_.device); }

 private:
  DeviceOptions o_;
};

}  // namespace

Result<std::shared_ptr<const Backend>> MakeDeviceBackend(const DeviceOptions& o) {
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
  return std::shared_ptr<const Backend>(std::make_shared<DeviceBackend>(o));
}

Status UseDeviceExecutor(const DeviceOptions& o, EngineConfig* c) {
  PG_ASSIGN_OR_RETURN(c->backend, MakeDeviceBackend(o));
  return Status::Ok();
}

}  // namespace pg::gpu
