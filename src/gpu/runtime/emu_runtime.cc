// The emulator's runtime API: device memory kept apart from host memory,
// checked copies, the sticky error (streams and events: emu_stream.cc).
#include "gpu/runtime/emu_runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace pg::gpu::emu {

namespace {

// The emulated device's memory, an accounting cap on gpuMalloc (16 GiB unless
// PROSGROW_EMU_DEVICE_MEM gives bytes).
size_t DeviceCapacity() {
  static const size_t cap = [] {
    const char* env = std::getenv("PROSGROW_EMU_DEVICE_MEM");
    return env && *env ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : size_t{16} << 30;
  }();
  return cap;
}

struct Allocations {
  std::mutex mu;
  std::map<uintptr_t, size_t> device;  // start -> bytes
  std::map<uintptr_t, size_t> pinned;
  size_t device_bytes = 0;
};
Allocations& Allocs() {
  static Allocations* a = new Allocations();  // lives until exit (kernels may run from static dtors)
  return *a;
}

bool InRange(const std::map<uintptr_t, size_t>& m, const void* p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = m.upper_bound(a);
  if (it == m.begin()) return false;
  --it;
  // A zero-byte range may sit one past the end (a pointer argument's end).
  return a >= it->first && a + bytes <= it->first + it->second;
}

thread_local gpuError_t tl_error = gpuSuccess;

gpuError_t Fail(gpuError_t e, const char* what) {
  SetLastError(e, what);
  return e;
}

constexpr size_t kDeviceAlign = 256, kHostAlign = 64;  // gpuMalloc's, gpuMallocHost's

// What a gpuMalloc of `bytes` counts against DeviceCapacity().
size_t DeviceRounded(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
}

// gpuFree (device) or gpuFreeHost: p must be a live allocation of that kind.
gpuError_t Release(void* p, bool device) {
  if (!p) return gpuSuccess;
  Allocations& a = Allocs();
  std::lock_guard<std::mutex> lock(a.mu);
  std::map<uintptr_t, size_t>& table = device ? a.device : a.pinned;
  auto it = table.find(reinterpret_cast<uintptr_t>(p));
  if (it == table.end()) {
    return Fail(gpuErrorInvalidValue, device ? "free of a pointer gpuMalloc did not return"
                                             : "free host of a pointer gpuMallocHost did not return");
  }
  if (device) a.device_bytes -= DeviceRounded(it->second);
  table.erase(it);
  ::operator delete (p, std::align_val_t{device ? kDeviceAlign : kHostAlign});
  return gpuSuccess;
}

}  // namespace

bool IsDeviceRange(const void* p, size_t bytes) {
  Allocations& a = Allocs();
  std::lock_guard<std::mutex> lock(a.mu);
  return InRange(a.device, p, bytes);
}

void SetLastError(gpuError_t e, const char*) {
  if (tl_error == gpuSuccess) tl_error = e;
}

}  // namespace pg::gpu::emu

using namespace pg::gpu::emu;

const char* gpuGetErrorString(gpuError_t e) {
  switch (e) {
    case gpuSuccess: return "no error";
    case gpuErrorInvalidValue: return "invalid argument (emulator: wrong memory kind, bad pointer or bad launch)";
    case gpuErrorMemoryAllocation: return "out of memory";
    case gpuErrorInvalidDevice: return "invalid device ordinal";
    case gpuErrorNotReady: return "device not ready";
    case gpuErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

gpuError_t gpuGetLastError() {
  const gpuError_t e = tl_error;
  tl_error = gpuSuccess;
  return e;
}

gpuError_t gpuGetDeviceCount(int* n) {
  *n = 1;
  return gpuSuccess;
}

gpuError_t gpuSetDevice(int device) { return device == 0 ? gpuSuccess : Fail(gpuErrorInvalidDevice, "set device"); }

gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int device) {
  if (device != 0) return Fail(gpuErrorInvalidDevice, "device properties");
  *p = gpuDeviceProp{};
  std::snprintf(p->name, sizeof(p->name), "prosgrow CPU emulator (warp %d)", WarpSize());
  p->totalGlobalMem = DeviceCapacity();
  p->multiProcessorCount = 1;
  p->warpSize = WarpSize();
  return gpuSuccess;
}

gpuError_t gpuDriverGetVersion(int* v) {
  *v = 0;
  return gpuSuccess;
}
gpuError_t gpuRuntimeGetVersion(int* v) {
  *v = 0;
  return gpuSuccess;
}

gpuError_t gpuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  Allocations& a = Allocs();
  std::lock_guard<std::mutex> lock(a.mu);
  *total_bytes = DeviceCapacity();
  *free_bytes = DeviceCapacity() - a.device_bytes;
  return gpuSuccess;
}

gpuError_t gpuMalloc(void** p, size_t bytes) {
  Allocations& a = Allocs();
  std::lock_guard<std::mutex> lock(a.mu);
  const size_t rounded = DeviceRounded(bytes);
  if (a.device_bytes + rounded > DeviceCapacity()) return Fail(gpuErrorMemoryAllocation, "malloc");
  void* m = ::operator new (rounded, std::align_val_t{kDeviceAlign}, std::nothrow);
  if (!m) return Fail(gpuErrorMemoryAllocation, "malloc");
  a.device[reinterpret_cast<uintptr_t>(m)] = bytes;  // the range checks use what was asked for
  a.device_bytes += rounded;
  *p = m;
  return gpuSuccess;
}

gpuError_t gpuFree(void* p) { return Release(p, /*device=*/true); }

gpuError_t gpuMallocHost(void** p, size_t bytes) {
  Allocations& a = Allocs();
  void* m = ::operator new (std::max<size_t>(bytes, 1), std::align_val_t{kHostAlign}, std::nothrow);
  if (!m) return Fail(gpuErrorMemoryAllocation, "malloc host");
  std::lock_guard<std::mutex> lock(a.mu);
  a.pinned[reinterpret_cast<uintptr_t>(m)] = bytes;
  *p = m;
  return gpuSuccess;
}

gpuError_t gpuFreeHost(void* p) { return Release(p, /*device=*/false); }

bool pg::gpu::emu::CopyKindMatches(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind) {
  const bool dst_dev = IsDeviceRange(dst, bytes), src_dev = IsDeviceRange(src, bytes);
  bool ok = false;
  switch (kind) {
    case gpuMemcpyHostToHost: ok = !dst_dev && !src_dev; break;
    case gpuMemcpyHostToDevice: ok = dst_dev && !src_dev; break;
    case gpuMemcpyDeviceToHost: ok = !dst_dev && src_dev; break;
    case gpuMemcpyDeviceToDevice: ok = dst_dev && src_dev; break;
    case gpuMemcpyDefault: ok = true; break;
  }
  return ok && dst && src;
}

gpuError_t gpuMemcpy(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind) {
  if (bytes == 0) return gpuSuccess;
  if (!CopyKindMatches(dst, src, bytes, kind))
    return Fail(gpuErrorInvalidValue, "memcpy: pointers do not match the copy kind");
  std::memmove(dst, src, bytes);
  return gpuSuccess;
}

gpuError_t gpuMemset(void* p, int value, size_t bytes) {
  if (bytes == 0) return gpuSuccess;
  if (!IsDeviceRange(p, bytes)) return Fail(gpuErrorInvalidValue, "memset of host memory");
  std::memset(p, value, bytes);
  return gpuSuccess;
}
