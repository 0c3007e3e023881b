// Test helpers of the GPU op tests: device buffers, the normalised error the
// tests compare by, and the no-device skip.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/test_util.h"
#include "base/normalised_error.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu::testing {

// The CPU tests' random inputs, for the references the GPU ops are checked against.
using ::pg::testing::RandomFloats;
using ::pg::testing::RandomWeights;

// True when a device is there to run on (always, emulated).
inline bool HaveDevice() {
  int n = 0;
  const bool ok = gpuGetDeviceCount(&n) == gpuSuccess && n > 0;
  (void)gpuGetLastError();
  return ok;
}

#define PG_GPU_SKIP_WITHOUT_DEVICE()                                        \
  do {                                                                      \
    if (!::pg::gpu::testing::HaveDevice()) GTEST_SKIP() << "no GPU device"; \
  } while (0)

// Runs body once per warp width the build can run kernels at: 32 and 64 in
// the emulator (NVIDIA's and CDNA's widths, so no kernel hard-codes either),
// the device's own width otherwise. SCOPED_TRACE names the width.
template <typename F>
void ForEachWarpSize(F&& body) {
#if defined(PROSGROW_GPU_EMULATED)
  for (int w : {32, 64}) {
    ::pg::gpu::emu::SetWarpSize(w);
    SCOPED_TRACE(::testing::Message() << "warp size " << w);
    body();
  }
  ::pg::gpu::emu::SetWarpSize(32);
#else
  body();
#endif
}

#define PG_GPU_OK(expr) ASSERT_EQ((expr), gpuSuccess) << gpuGetErrorString(expr)

// A device array of T, freed on destruction.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    if (gpuMalloc(reinterpret_cast<void**>(&p_), std::max<size_t>(n, 1) * sizeof(T)) != gpuSuccess) p_ = nullptr;
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { Upload(host); }
  ~DeviceArray() { gpuFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return p_; }
  size_t size() const { return n_; }
  void Upload(const std::vector<T>& host) {
    ASSERT_EQ(host.size(), n_);
    ASSERT_EQ(gpuMemcpy(p_, host.data(), n_ * sizeof(T), gpuMemcpyHostToDevice), gpuSuccess);
  }
  std::vector<T> Download() const {
    std::vector<T> out(n_);
    EXPECT_EQ(gpuMemcpy(out.data(), p_, n_ * sizeof(T), gpuMemcpyDeviceToHost), gpuSuccess);
    return out;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Normalised mean squared error, sum (a - b)^2 / sum b^2 (b the reference),
// as llama.cpp's test-backend-ops compares backends.
inline double Nmse(const std::vector<float>& a, const std::vector<float>& ref) {
  EXPECT_EQ(a.size(), ref.size());
  return NormalisedError(a.data(), ref.data(), std::min(a.size(), ref.size()));
}

}  // namespace pg::gpu::testing
