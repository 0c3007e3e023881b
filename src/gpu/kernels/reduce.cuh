// Warp and block reductions on PgWarpSize()-wide warps (a value: 32 or 64).
// Block sizes must be multiples of the warp width (every launcher's are
// multiples of 64), so no warp is partial.
#pragma once

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// Maximum warps in a block (1024 threads of 32 lanes).
constexpr int kMaxWarps = 32;

PG_DEVICE float WarpSum(float v) {
  for (int m = PgWarpSize() / 2; m > 0; m >>= 1) v += PgShflXor(v, m);
  return v;
}
PG_DEVICE float WarpMax(float v) {
  for (int m = PgWarpSize() / 2; m > 0; m >>= 1) v = fmaxf(v, PgShflXor(v, m));
  return v;
}

// Every thread of the block gets the sum of v over the block, summed in the
// same order on every run (warp trees, then warps in order).
// scratch: kMaxWarps floats of shared memory, reused by later calls.
PG_DEVICE float BlockSum(float v, float* scratch) {
  v = WarpSum(v);
  const int ws = PgWarpSize();
  const int n_warps = static_cast<int>(blockDim.x) / ws;
  __syncthreads();  // an earlier call's readers are done with scratch
  if (PgLaneId() == 0) scratch[threadIdx.x / ws] = v;
  __syncthreads();
  float t = 0.0f;
  for (int i = 0; i < n_warps; ++i) t += scratch[i];
  return t;
}
PG_DEVICE float BlockMax(float v, float* scratch) {
  v = WarpMax(v);
  const int ws = PgWarpSize();
  const int n_warps = static_cast<int>(blockDim.x) / ws;
  __syncthreads();
  if (PgLaneId() == 0) scratch[threadIdx.x / ws] = v;
  __syncthreads();
  float t = scratch[0];
  for (int i = 1; i < n_warps; ++i) t = fmaxf(t, scratch[i]);
  return t;
}

}  // namespace pg::gpu
