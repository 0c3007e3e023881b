// The runtime under the kernels: the emulator's semantics (barriers, warp
// exchange at widths 32 and 64, shared memory, atomics, grid indices) and its
// misuse checks (device memory apart from host memory, pointer arguments,
// divergent barriers). The same kernels run on a real device in the CUDA
// build (the misuse checks are emulator-only).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "gpu/device_info.h"
#include "gpu/gpu_test_util.h"
#include "gpu/testing_kernels.h"

namespace pg::gpu {
namespace {

using testing::DeviceArray;
using testing::ForEachWarpSize;

TEST(GpuRuntime, BlockBarrierAndSharedMemory) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  for (unsigned n : {64u, 256u, 1024u}) {
    DeviceArray<int> out(3 * n);
    ASSERT_EQ(testing::LaunchBlockSum(dim3(3), dim3(n), out.get()), gpuSuccess);
    for (int v : out.Download()) EXPECT_EQ(v, static_cast<int>(n * (n + 1) / 2));
  }
}

TEST(GpuRuntime, WarpShufflesAndVotesAtEachWidth) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  ForEachWarpSize([] {
    const int n = 128;
    DeviceArray<int> xr(n), down(n), all(n), any(n);
    DeviceArray<unsigned long long> ballot(n);
    ASSERT_EQ(testing::LaunchWarp(n, xr.get(), down.get(), ballot.get(), all.get(), any.get()), gpuSuccess);
    gpuDeviceProp p;
    ASSERT_EQ(gpuGetDeviceProperties(&p, 0), gpuSuccess);
    const int w = p.warpSize;
    unsigned long long odd = 0;
    for (int l = 1; l < w; l += 2) odd |= 1ull << l;
    const auto x = xr.Download(), d = down.Download(), a = all.Download(), y = any.Download();
    const auto b = ballot.Download();
    for (int t = 0; t < n; ++t) {
      const int lane = t % w;
      EXPECT_EQ(x[t], lane ^ 1);
      EXPECT_EQ(d[t], lane + 1 < w ? (lane + 1) * 10 : lane * 10);
      EXPECT_EQ(b[t], odd);
      EXPECT_EQ(a[t], 0);
      EXPECT_EQ(y[t], 1);
    }
  });
}

TEST(GpuRuntime, AtomicsAndGridIndices) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  DeviceArray<int> counter(std::vector<int>{0});
  DeviceArray<float> fsum(std::vector<float>{0.0f});
  ASSERT_EQ(testing::LaunchAtomic(dim3(5), dim3(64), counter.get(), fsum.get()), gpuSuccess);
  EXPECT_EQ(counter.Download()[0], 320);
  EXPECT_EQ(fsum.Download()[0], 160.0f);
  DeviceArray<int> idx(2 * 3 * 4 * 16);
  ASSERT_EQ(testing::LaunchIndex(dim3(2, 3), dim3(16, 4), idx.get()), gpuSuccess);
  const auto v = idx.Download();
  for (int b = 0; b < 6; ++b) {
    for (int t = 0; t < 64; ++t) EXPECT_EQ(v[b * 64 + t], b * 1000 + t);
  }
}

TEST(GpuRuntime, StreamsAndEventsKeepOrder) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  gpuStream_t s;
  gpuEvent_t e0, e1;
  ASSERT_EQ(gpuStreamCreate(&s), gpuSuccess);
  ASSERT_EQ(gpuEventCreate(&e0), gpuSuccess);
  ASSERT_EQ(gpuEventCreate(&e1), gpuSuccess);
  void* pinned = nullptr;
  ASSERT_EQ(gpuMallocHost(&pinned, 4096), gpuSuccess);
  std::iota(static_cast<uint8_t*>(pinned), static_cast<uint8_t*>(pinned) + 4096, uint8_t{0});
  DeviceArray<uint8_t> dev(4096);
  std::vector<uint8_t> back(4096);
  ASSERT_EQ(gpuEventRecord(e0, s), gpuSuccess);
  ASSERT_EQ(gpuMemcpyAsync(dev.get(), pinned, 4096, gpuMemcpyHostToDevice, s), gpuSuccess);
  ASSERT_EQ(gpuMemcpyAsync(back.data(), dev.get(), 4096, gpuMemcpyDeviceToHost, s), gpuSuccess);
  ASSERT_EQ(gpuEventRecord(e1, s), gpuSuccess);
  ASSERT_EQ(gpuEventSynchronize(e1), gpuSuccess);
  EXPECT_EQ(0, std::memcmp(back.data(), pinned, 4096));
  float ms = -1;
  ASSERT_EQ(gpuEventElapsedTime(&ms, e0, e1), gpuSuccess);
  EXPECT_GE(ms, 0.0f);
  gpuFreeHost(pinned);
  gpuEventDestroy(e0);
  gpuEventDestroy(e1);
  gpuStreamDestroy(s);
}

TEST(GpuRuntime, DeviceInfoNamesTheBackend) {
  const GpuReport r = QueryGpus();
  EXPECT_EQ(r.backend, CompiledGpuBackend());
  if (testing::HaveDevice()) {
    ASSERT_FALSE(r.devices.empty());
    EXPECT_GT(r.devices[0].total_bytes, 0u);
    EXPECT_FALSE(r.devices[0].name.empty());
  } else {
    EXPECT_TRUE(r.devices.empty());
    EXPECT_FALSE(r.error.empty());
  }
}

#if defined(PROSGROW_GPU_EMULATED)
TEST(GpuEmulator, CopiesCheckTheirKindAgainstThePointers) {
  std::vector<float> host(16, 1.0f), host2(16);
  DeviceArray<float> dev(16);
  EXPECT_EQ(gpuMemcpy(dev.get(), host.data(), 64, gpuMemcpyDeviceToHost), gpuErrorInvalidValue);
  EXPECT_EQ(gpuMemcpy(host2.data(), host.data(), 64, gpuMemcpyHostToDevice), gpuErrorInvalidValue);
  EXPECT_EQ(gpuMemcpy(dev.get(), host.data(), 128, gpuMemcpyHostToDevice), gpuErrorInvalidValue);  // past the end
  EXPECT_EQ(gpuMemset(host.data(), 0, 64), gpuErrorInvalidValue);
  EXPECT_EQ(gpuFree(host.data()), gpuErrorInvalidValue);
  (void)gpuGetLastError();
  EXPECT_EQ(gpuMemcpy(dev.get(), host.data(), 64, gpuMemcpyHostToDevice), gpuSuccess);
}

// The emulator runs a created stream's copies only when something orders
// them, so code that reads a copy's target without waiting fails here.
TEST(GpuEmulator, AnAsyncCopyIsNotVisibleUntilWaitedFor) {
  std::vector<uint8_t> host(256, 7), back(256, 0);
  DeviceArray<uint8_t> dev(256);
  gpuStream_t s;
  gpuEvent_t e;
  ASSERT_EQ(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), gpuSuccess);
  ASSERT_EQ(gpuEventCreate(&e), gpuSuccess);
  ASSERT_EQ(gpuMemcpyAsync(dev.get(), host.data(), 256, gpuMemcpyHostToDevice, s), gpuSuccess);
  ASSERT_EQ(gpuMemcpyAsync(back.data(), dev.get(), 256, gpuMemcpyDeviceToHost, s), gpuSuccess);
  ASSERT_EQ(gpuEventRecord(e, s), gpuSuccess);
  EXPECT_EQ(back[0], 0);  // not waited for: not there yet
  host[0] = 9;            // the source is read when the copy runs, not when it is queued
  ASSERT_EQ(gpuEventSynchronize(e), gpuSuccess);
  EXPECT_EQ(back[0], 9);
  EXPECT_EQ(back[255], 7);
  gpuEventDestroy(e);
  gpuStreamDestroy(s);
}

TEST(GpuEmulator, EachOrderingCallRunsTheQueuedCopies) {
  DeviceArray<uint8_t> dev(64);
  gpuStream_t s, other;
  gpuEvent_t e;
  ASSERT_EQ(gpuStreamCreate(&s), gpuSuccess);
  ASSERT_EQ(gpuStreamCreate(&other), gpuSuccess);
  ASSERT_EQ(gpuEventCreate(&e), gpuSuccess);
  std::vector<uint8_t> src(64), dst(64);
  const auto copy_then = [&](uint8_t v, const auto& order) {
    std::fill(src.begin(), src.end(), v);
    ASSERT_EQ(gpuMemcpyAsync(dev.get(), src.data(), 64, gpuMemcpyHostToDevice, s), gpuSuccess);
    ASSERT_EQ(gpuMemcpyAsync(dst.data(), dev.get(), 64, gpuMemcpyDeviceToHost, s), gpuSuccess);
    ASSERT_EQ(gpuEventRecord(e, s), gpuSuccess);
    ASSERT_NE(dst[0], v);
    order();
    EXPECT_EQ(dst[0], v);
  };
  copy_then(1, [&] { EXPECT_EQ(gpuStreamSynchronize(s), gpuSuccess); });
  copy_then(2, [&] { EXPECT_EQ(gpuDeviceSynchronize(), gpuSuccess); });
  copy_then(3, [&] { EXPECT_EQ(gpuStreamWaitEvent(other, e, 0), gpuSuccess); });
  copy_then(4, [&] {
    EXPECT_EQ(gpuEventQuery(e), gpuErrorNotReady);  // asked once: not yet, and now it runs
    EXPECT_EQ(gpuEventQuery(e), gpuSuccess);
  });
  copy_then(5, [&] {
    EXPECT_EQ(gpuStreamSynchronize(other), gpuSuccess);  // another stream: does not order s
    EXPECT_EQ(dst[0], 4);
    EXPECT_EQ(gpuEventSynchronize(e), gpuSuccess);
  });
  gpuEventDestroy(e);
  gpuStreamDestroy(other);
  gpuStreamDestroy(s);
}

TEST(GpuEmulator, ALaunchRunsItsStreamsQueueFirst) {
  std::vector<int> host(64, 5);
  DeviceArray<int> out(64);
  gpuStream_t s;
  ASSERT_EQ(gpuStreamCreate(&s), gpuSuccess);
  ASSERT_EQ(gpuMemsetAsync(out.get(), 0, 64 * sizeof(int), s), gpuSuccess);
  ASSERT_EQ(testing::LaunchBlockSum(dim3(1), dim3(64), out.get(), s), gpuSuccess);
  ASSERT_EQ(gpuMemcpyAsync(host.data(), out.get(), 64 * sizeof(int), gpuMemcpyDeviceToHost, s), gpuSuccess);
  ASSERT_EQ(gpuStreamSynchronize(s), gpuSuccess);
  EXPECT_EQ(host[0], 64 * 65 / 2);
  gpuStreamDestroy(s);
}

TEST(GpuEmulator, AKernelGivenHostMemoryFailsToLaunch) {
  std::vector<int> host(64);
  EXPECT_EQ(testing::LaunchBlockSum(dim3(1), dim3(64), host.data()), gpuErrorInvalidValue);
  EXPECT_EQ(gpuGetLastError(), gpuSuccess);  // read once (by the launcher), then cleared
  EXPECT_EQ(host[0], 0);
}

TEST(GpuEmulator, BadLaunchGeometryIsAnError) {
  DeviceArray<int> out(64);
  EXPECT_EQ(testing::LaunchBlockSum(dim3(1), dim3(2048), out.get()), gpuErrorInvalidValue);
}

TEST(GpuEmulatorDeathTest, ADivergentBarrierIsFatalAndNamesTheKernel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DeviceArray<int> out(64);
  EXPECT_DEATH(testing::LaunchDivergentBarrier(out.get()), "DivergentBarrierKernel deadlocked");
}
#endif

}  // namespace
}  // namespace pg::gpu
