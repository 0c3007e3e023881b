// Launchers of the runtime test kernels (testing_kernels.cu), for
// runtime_test.cc. Each returns the launch's error.
#pragma once

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu::testing {

// out[b * n + t] = 1 + 2 + ... + n, summed through shared memory after a barrier.
gpuError_t LaunchBlockSum(dim3 grid, dim3 block, int* out, gpuStream_t s = nullptr);
// Per thread: lane ^ 1 by shuffle, lane+1's value * 10 by shuffle-down, the
// ballot / all / any of (lane odd).
gpuError_t LaunchWarp(int n, int* xr, int* down, unsigned long long* ballot, int* all_odd, int* any_odd);
// Each thread adds 1 to *counter and 0.5 to *fsum.
gpuError_t LaunchAtomic(dim3 grid, dim3 block, int* counter, float* fsum);
// out[linear block * threads + linear thread] = block * 1000 + thread.
gpuError_t LaunchIndex(dim3 grid, dim3 block, int* out);
// A shuffle that lane 0 skips while it waits at __syncthreads: a deadlock
// the emulator reports (fatal).
gpuError_t LaunchDivergentBarrier(int* out);

}  // namespace pg::gpu::testing
