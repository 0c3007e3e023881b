// PG_GPU_TRY(expr): evaluates a gpu* call or kernel launcher returning
// gpuError_t and returns Internal("device executor: <expr>: <error>") from
// the enclosing Status / Result function when it is not gpuSuccess (clearing
// the runtime's sticky error).
#pragma once

#include <fmt/format.h>

#include "base/status.h"
#include "gpu/runtime/gpu_vendor.h"

#define PG_GPU_TRY(expr)                                                                                  \
  do {                                                                                                    \
    if (const gpuError_t pg_gpu_e_ = (expr); pg_gpu_e_ != gpuSuccess) {                                   \
      (void)gpuGetLastError();                                                                            \
      return ::pg::Internal(fmt::format("device executor: {}: {}", #expr, gpuGetErrorString(pg_gpu_e_))); \
    }                                                                                                     \
  } while (0)
