// The 8-lane f32 dot of MLA attention and the DSA indexer on the device, in
// the CPU's order (DotLanes8, model/dsa_indexer.h): lane l takes d = l mod 8
// in increasing d with fmas, the lanes reduced as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)),
// a tail fma'd on after. `a` is f32, `row` a cached row (f16, bf16 or f32)
// widened element by element (exact), so the emulated kernels give the
// CPU's bits.
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

PG_DEVICE float DotLanes8Row(const float* a, const DeviceKvPages& kv, const uint16_t* row, int64_t n) {
  float l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const int64_t n8 = n & ~int64_t{7};
  for (int64_t i = 0; i < n8; i += 8)
    for (int j = 0; j < 8; ++j) l[j] = fmaf(a[i + j], kv.Load(row, i + j), l[j]);
  float s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
  for (int64_t i = n8; i < n; ++i) s = fmaf(a[i], kv.Load(row, i), s);
  return s;
}

}  // namespace pg::gpu
