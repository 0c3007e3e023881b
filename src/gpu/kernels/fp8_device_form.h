// The device form of an FP8 matrix (kernels/fp8.cuh) made on the host from
// the CPU's packed FP8_E4M3 blocks (backend/cpu/quant.h: 68-byte blocks of 64
// weights, an f32 scale then 64 E4M3 bytes; a Hugging Face FP8 tensor and its
// scale packed by PackFp8E4M3): the bytes unchanged, one per weight, and the
// scales in the most compact layout that gives every weight its block's scale
// exactly, so the device computes the same f32 weights as the CPU:
//
//   kPerRow    every row's blocks share one scale (per-channel and per-tensor
//              checkpoints)
//   kBlock128  every 128x128 tile's blocks share one (DeepSeek-V3-style
//              weight_scale_inv)
//   kBlock64   anything else: the blocks' own scales
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/kernels/fp8.cuh"

namespace pg::gpu {

// n_mats matrices of rows x cols (cols a multiple of 64), matrix e's blocks at
// blocks + e * mat_bytes: the layout that fits all of them.
Fp8Layout ChooseFp8Layout(const uint8_t* blocks, int64_t rows, int64_t cols, int64_t n_mats, size_t mat_bytes);

struct Fp8ScaleShape {
  int64_t ld = 0;       // DeviceMatrix::scale_ld
  int64_t per_mat = 0;  // floats per matrix (DeviceMatrix::scale_mat)
};
Fp8ScaleShape ScaleShapeOf(Fp8Layout layout, int64_t rows, int64_t cols);

// One matrix's device form: bytes (rows * cols) and scales (ScaleShapeOf's
// per_mat floats; kBlock128's padding columns 0). `layout` must fit the matrix.
void ToFp8DeviceForm(const uint8_t* blocks, int64_t rows, int64_t cols, Fp8Layout layout, uint8_t* bytes,
                     float* scales);

}  // namespace pg::gpu
