// Small kernels that exercise the runtime itself (runtime_test.cc): block
// and warp barriers, shuffles, votes, shared memory, atomics. Part of
// gpu_tests only (compiled by nvcc in the CUDA build, as C++ emulated).
#include "gpu/testing_kernels.h"

namespace pg::gpu::testing {
namespace {

// out[b * n + t] = sum over the block of (t + 1) computed through shared
// memory and __syncthreads (a barrier every thread must reach).
PG_GLOBAL void BlockSumKernel(int* out) {
  __shared__ int vals[1024];
  const int t = static_cast<int>(threadIdx.x), n = static_cast<int>(blockDim.x);
  vals[t] = t + 1;
  __syncthreads();
  int s = 0;
  for (int i = 0; i < n; ++i) s += vals[i];
  __syncthreads();
  out[blockIdx.x * n + t] = s;
}

// xor[i] = lane ^ 1's lane id, down[i] = lane + 1's value (own at the top),
// ballot[i] = the warp's ballot of (lane odd), all[i] / any[i] votes.
PG_GLOBAL void WarpKernel(int* xr, int* down, unsigned long long* ballot, int* all_odd, int* any_odd) {
  const int t = static_cast<int>(threadIdx.x), lane = PgLaneId();
  xr[t] = PgShflXor(lane, 1);
  down[t] = PgShflDown(lane * 10, 1);
  ballot[t] = PgBallot(lane % 2 == 1);
  all_odd[t] = PgAll(lane % 2 == 1);
  any_odd[t] = PgAny(lane % 2 == 1);
}

PG_GLOBAL void AtomicKernel(int* counter, float* fsum) {
  atomicAdd(counter, 1);
  atomicAdd(fsum, 0.5f);
}

PG_GLOBAL void IndexKernel(int* out) {
  const int b = static_cast<int>(blockIdx.x + gridDim.x * blockIdx.y);
  const int t = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  out[b * blockDim.x * blockDim.y + t] = b * 1000 + t;
}

// Lane 0 waits at the block barrier while its warp-mates wait for it in a
// shuffle: neither barrier can complete (undefined behaviour on a GPU).
PG_GLOBAL void DivergentBarrierKernel(int* out) {
  int v = static_cast<int>(threadIdx.x);
  if (PgLaneId() != 0) v = PgShflXor(v, 1);
  __syncthreads();
  out[threadIdx.x] = v;
}

}  // namespace

gpuError_t LaunchBlockSum(dim3 grid, dim3 block, int* out, gpuStream_t s) {
  PG_LAUNCH(BlockSumKernel, grid, block, 0, s, out);
  return gpuGetLastError();
}
gpuError_t LaunchWarp(int n, int* xr, int* down, unsigned long long* ballot, int* all_odd, int* any_odd) {
  PG_LAUNCH(WarpKernel, dim3(1), dim3(n), 0, nullptr, xr, down, ballot, all_odd, any_odd);
  return gpuGetLastError();
}
gpuError_t LaunchAtomic(dim3 grid, dim3 block, int* counter, float* fsum) {
  PG_LAUNCH(AtomicKernel, grid, block, 0, nullptr, counter, fsum);
  return gpuGetLastError();
}
gpuError_t LaunchIndex(dim3 grid, dim3 block, int* out) {
  PG_LAUNCH(IndexKernel, grid, block, 0, nullptr, out);
  return gpuGetLastError();
}
gpuError_t LaunchDivergentBarrier(int* out) {
  PG_LAUNCH(DivergentBarrierKernel, dim3(1), dim3(64), 0, nullptr, out);
  return gpuGetLastError();
}

}  // namespace pg::gpu::testing
