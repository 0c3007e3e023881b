// gpu_copy_bench: pinned host <-> device copy bandwidth in KV-block-sized
// pieces, as the tiered cache moves them: N blocks of B bytes host to device,
// device to host, and both at once on two copy streams, each timed with
// events. Prints one JSON object (GB/s = 1e9 bytes per second).
//
// usage: gpu_copy_bench [--block-bytes B] [--blocks N] [--reps R]
// In the emulated build the figures are the host's memcpy, not a bus.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/runtime/gpu_vendor.h"

namespace {

#define PG_TRY(expr)                                                                         \
  do {                                                                                       \
    const gpuError_t e_ = (expr);                                                            \
    if (e_ != gpuSuccess) {                                                                  \
      std::fprintf(stderr, "gpu_copy_bench: %s failed: %s\n", #expr, gpuGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct Setup {
  size_t block = 3u << 20;
  int blocks = 64;
  int reps = 5;
};

// Best of `reps` runs of `issue` (which enqueues on the streams), in ms.
template <typename F>
float BestMs(const Setup& s, gpuStream_t a, gpuStream_t b, F&& issue) {
  gpuEvent_t start, end_a, end_b;
  PG_TRY(gpuEventCreate(&start));
  PG_TRY(gpuEventCreate(&end_a));
  PG_TRY(gpuEventCreate(&end_b));
  float best = 1e30f;
  for (int r = 0; r < s.reps; ++r) {
    PG_TRY(gpuDeviceSynchronize());
    PG_TRY(gpuEventRecord(start, a));
    PG_TRY(gpuStreamWaitEvent(b, start, 0));
    issue();
    PG_TRY(gpuEventRecord(end_a, a));
    PG_TRY(gpuEventRecord(end_b, b));
    PG_TRY(gpuEventSynchronize(end_a));
    PG_TRY(gpuEventSynchronize(end_b));
    float ma = 0, mb = 0;
    PG_TRY(gpuEventElapsedTime(&ma, start, end_a));
    PG_TRY(gpuEventElapsedTime(&mb, start, end_b));
    best = std::min(best, std::max(ma, mb));
  }
  PG_TRY(gpuEventDestroy(start));
  PG_TRY(gpuEventDestroy(end_a));
  PG_TRY(gpuEventDestroy(end_b));
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  Setup s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (v <= 0) {
      std::fprintf(stderr, "gpu_copy_bench: %s needs a positive number\n", k.c_str());
      return 2;
    }
    if (k == "--block-bytes") {
      s.block = static_cast<size_t>(v);
    } else if (k == "--blocks") {
      s.blocks = static_cast<int>(v);
    } else if (k == "--reps") {
      s.reps = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "gpu_copy_bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const size_t total = s.block * static_cast<size_t>(s.blocks);
  void *h_up = nullptr, *h_down = nullptr, *d_up = nullptr, *d_down = nullptr;
  PG_TRY(gpuMallocHost(&h_up, total));
  PG_TRY(gpuMallocHost(&h_down, total));
  PG_TRY(gpuMalloc(&d_up, total));
  PG_TRY(gpuMalloc(&d_down, total));
  std::memset(h_up, 1, total);
  PG_TRY(gpuMemset(d_down, 2, total));
  gpuStream_t a, b;
  PG_TRY(gpuStreamCreate(&a));
  PG_TRY(gpuStreamCreate(&b));
  auto up = [&](gpuStream_t st) {
    for (int i = 0; i < s.blocks; ++i) {
      const size_t off = s.block * static_cast<size_t>(i);
      PG_TRY(gpuMemcpyAsync(static_cast<char*>(d_up) + off, static_cast<char*>(h_up) + off, s.block,
                            gpuMemcpyHostToDevice, st));
    }
  };
  auto down = [&](gpuStream_t st) {
    for (int i = 0; i < s.blocks; ++i) {
      const size_t off = s.block * static_cast<size_t>(i);
      PG_TRY(gpuMemcpyAsync(static_cast<char*>(h_down) + off, static_cast<char*>(d_down) + off, s.block,
                            gpuMemcpyDeviceToHost, st));
    }
  };
  const float ms_h2d = BestMs(s, a, b, [&] { up(a); });
  const float ms_d2h = BestMs(s, a, b, [&] { down(a); });
  const float ms_both = BestMs(s, a, b, [&] {
    up(a);
    down(b);
  });
  auto gbs = [&](double bytes, float ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; };
  std::printf(
      "{\"backend\": \"%s\", \"block_bytes\": %zu, \"blocks\": %d, \"reps\": %d, \"h2d_gbs\": %.2f, "
      "\"d2h_gbs\": %.2f, \"both_gbs\": %.2f, \"both_ms\": %.3f}\n",
      PG_GPU_VENDOR, s.block, s.blocks, s.reps, gbs(double(total), ms_h2d), gbs(double(total), ms_d2h),
      gbs(2.0 * double(total), ms_both), ms_both);
  gpuStreamDestroy(a);
  gpuStreamDestroy(b);
  gpuFree(d_up);
  gpuFree(d_down);
  gpuFreeHost(h_up);
  gpuFreeHost(h_down);
  return 0;
}
