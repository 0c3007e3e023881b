// QueryGpus for each PROSGROW_GPU mode (device_info.h).
#include "gpu/device_info.h"

#include <fmt/format.h>

#if defined(PROSGROW_GPU_CUDA) || defined(PROSGROW_GPU_HIP) || defined(PROSGROW_GPU_EMULATED)
#include "gpu/runtime/gpu_vendor.h"
#define PG_HAVE_GPU 1
#else
#define PG_HAVE_GPU 0
#endif

namespace pg {

const char* CompiledGpuBackend() {
#if PG_HAVE_GPU
  return PG_GPU_VENDOR;
#else
  return "off";
#endif
}

#if PG_HAVE_GPU
namespace {
// CUDA encodes versions as 1000 * major + 10 * minor; HIP as 10^7 * major + 10^5 * minor + patch.
std::string VersionString(int v) {
#if defined(PROSGROW_GPU_HIP)
  return fmt::format("{}.{}.{}", v / 10000000, (v / 100000) % 100, v % 100000);
#elif defined(PROSGROW_GPU_CUDA)
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
#else
  return v == 0 ? "emulator" : std::to_string(v);
#endif
}
}  // namespace

GpuReport QueryGpus() {
  GpuReport r;
  r.backend = CompiledGpuBackend();
  int v = 0;
  if (gpuRuntimeGetVersion(&v) == gpuSuccess) r.runtime_version = VersionString(v);
  if (gpuDriverGetVersion(&v) == gpuSuccess && v != 0) r.driver_version = VersionString(v);
#if defined(PROSGROW_GPU_EMULATED)
  r.driver_version = "emulator";
#endif
  int n = 0;
  const gpuError_t e = gpuGetDeviceCount(&n);
  if (e != gpuSuccess || n == 0) {
    r.error = e != gpuSuccess ? gpuGetErrorString(e) : "no device";
    (void)gpuGetLastError();
    return r;
  }
  for (int i = 0; i < n; ++i) {
    gpuDeviceProp p;
    if (gpuGetDeviceProperties(&p, i) != gpuSuccess) continue;
    GpuDevice d;
    d.index = i;
    d.name = p.name;
    d.total_bytes = p.totalGlobalMem;
    d.warp_size = p.warpSize;
#if !defined(PROSGROW_GPU_EMULATED)
    d.arch = fmt::format("sm_{}{}", p.major, p.minor);
#endif
    size_t free_b = 0, total_b = 0;
    if (gpuSetDevice(i) == gpuSuccess && gpuMemGetInfo(&free_b, &total_b) == gpuSuccess) d.free_bytes = free_b;
    r.devices.push_back(std::move(d));
  }
  (void)gpuGetLastError();
  return r;
}
#else
GpuReport QueryGpus() {
  GpuReport r;
  r.backend = "off";
  r.error = "this build has no GPU backend (configure with -DPROSGROW_GPU=cuda, hip or emulated)";
  return r;
}
#endif

}  // namespace pg
