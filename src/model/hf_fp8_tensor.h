// PackHfFp8Tensor: one FP8 checkpoint matrix (a safetensors F8_E4M3 tensor
// `X.weight` of shape [rows, cols]) and its scale companion, packed into the
// FP8_E4M3 weight type (backend/cpu/fp8_weights.h): the E4M3 bytes unchanged,
// each 64-element block carrying the scale that covers it.
//
// The scale is `X.weight_scale_inv` (DeepSeek-V3 / Qwen3-FP8 / GLM FP8; the
// value multiplies, despite the name) or `X.weight_scale`, stored as F32,
// BF16 or F16, and its shape must be what config.json's quantization_config
// makes (hf_model_config.h HfFp8Config): [ceil(rows / 128), ceil(cols / 128)]
// with weight_block_size [128, 128], else [] / [1] (per tensor) or [rows] /
// [rows, 1] (per channel).
//
// Errors are one line naming the shard file and the tensor (a missing scale,
// a scale of the wrong shape or dtype, a NaN byte, a negative scale).
//
// Thread-safety: pure function (reads `d`, writes `dst`).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "hf/hf_dir.h"
#include "model/hf_model_config.h"

namespace pg {

// dst holds Fp8PackedBytes(rows, cols) bytes.
Status PackHfFp8Tensor(const HfDir& d, const SafeTensor& w, const HfFp8Config& q, uint8_t* dst);

}  // namespace pg
