// UploadFp8Matrix: an FP8_E4M3 weight matrix, or an expert stack of them, as
// the device keeps it (kernels/fp8.cuh): the E4M3 bytes, one per weight, and
// the f32 scales in the layout ChooseFp8Layout finds (per row for per-channel
// and per-tensor checkpoints, per 128x128 tile for block-scaled ones, per 64
// weights otherwise). DeviceWeights::Matrix calls it for FP8_E4M3 matrices.
//
// Thread-safety: as DeviceWeights::Upload (one caller).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/status.h"
#include "gpu/kernels/matmul.h"
#include "model/model_weights.h"

namespace pg::gpu {

// w: row-major FP8_E4M3 (the CPU's packed blocks); n_mats matrices of its
// shape, matrix e at w.data + e * mat_bytes. alloc: device bytes that live as
// long as the result.
Result<DeviceMatrix> UploadFp8Matrix(const WeightMatrix& w, int64_t n_mats, size_t mat_bytes,
                                     const std::function<Result<void*>(size_t)>& alloc);

}  // namespace pg::gpu
