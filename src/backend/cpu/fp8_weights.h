// FP8 checkpoint weights (E4M3 bytes with float32 scales, as Hugging Face
// safetensors hold them) packed into the FP8_E4M3 weight type (quant.h):
// 64-element blocks { f32 d; uint8 q[64]; }, 1.0625 bytes per weight, whose
// q are the checkpoint's bytes unchanged and whose d is the scale that covers
// the block, so that DequantizeRow / MatMul see w = fp8 * scale exactly as the
// checkpoint defines it.
//
// The scale layouts:
//   kBlock128x128 : DeepSeek-V3 / Qwen3-FP8 / GLM FP8 `weight_scale_inv`,
//                   float32 [ceil(rows / 128), ceil(cols / 128)] row-major;
//                   w[r][c] = fp8[r][c] * scale[r / 128][c / 128]
//   kPerChannel   : compressed-tensors `weight_scale` of a channel-wise
//                   scheme, [rows] (or [rows, 1]); w[r][c] = fp8[r][c] * scale[r]
//   kPerTensor    : compressed-tensors tensor-wise `weight_scale`, one value
// Scales stored as BF16 / F16 are converted to float by the caller.
//
// An expert stack (a MoE layer's [n_expert, rows, cols]) is n_expert packed
// matrices one after another: expert e at dst + e * Fp8PackedBytes(rows, cols),
// which is then ExpertStack::expert_bytes (model/model_weights.h).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace pg {

enum class Fp8ScaleKind { kBlock128x128, kPerChannel, kPerTensor };

// One checkpoint tensor: rows x cols E4M3FN bytes, row-major (a safetensors
// F8_E4M3 tensor of shape [rows, cols]), and its scales as above.
struct Fp8Source {
  const uint8_t* fp8 = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  Fp8ScaleKind kind = Fp8ScaleKind::kBlock128x128;
  const float* scales = nullptr;
  int64_t n_scales = 0;  // must be what `kind` needs for rows x cols
};

// The number of scales `kind` needs for a rows x cols matrix.
int64_t Fp8ScaleCount(Fp8ScaleKind kind, int64_t rows, int64_t cols);

// Bytes of the packed FP8_E4M3 matrix: rows * RowBytes(FP8_E4M3, cols).
size_t Fp8PackedBytes(int64_t rows, int64_t cols);

// Packs src into dst (Fp8PackedBytes(rows, cols) bytes; view it with
// MakeWeightMatrix(GgmlType::FP8_E4M3, dst, rows, cols)). Errors (one line,
// naming the field; the caller adds the file and tensor name): cols not a
// multiple of 64, a scale count that does not match the kind, a scale that is
// negative or not finite, an E4M3 NaN byte (0x7F / 0xFF) in the weights.
Status PackFp8E4M3(const Fp8Source& src, void* dst);

// The checkpoint side, as DeepSeek-V3's FP8 block quantizer makes one: w
// (rows x cols f32, row-major) to E4M3 bytes `fp8` (rows * cols) and 128x128
// block scales `scales` (Fp8ScaleCount(kBlock128x128, rows, cols), row-major):
// per block scale = amax / 448 and fp8 = F32ToE4m3(w / scale); an all-zero
// block gets scale 0 and zero bytes. Packing the result (PackFp8E4M3) gives
// back w to within E4M3's rounding (half an ulp of 3 mantissa bits).
void QuantizeFp8Block128(const float* w, int64_t rows, int64_t cols, uint8_t* fp8, float* scales);

}  // namespace pg
