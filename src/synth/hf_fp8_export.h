// The FP8 side of the Hugging Face exporter (hf_export.h, HfExportOptions::
// fp8): which tensors a checkpoint stores as FP8, how one is quantized, and
// the GGUF that holds the FP8 directory's dequantized values, so that the two
// loads can be compared.
//
// As DeepSeek-V3's FP8 checkpoint does, the layers' linear weights (attention
// and FFN projections, expert stacks, shared experts) become E4M3 with
// float32 `weight_scale_inv` per 128x128 block (QuantizeFp8Block128 in
// backend/cpu/fp8_weights.h, scale = amax / 448), quantized in Hugging Face's
// row order (llama's q/k included); embeddings, lm_head, norms, biases and the
// routers keep the GGUF's precision.
//
// Thread-safety: pure functions (WriteFp8DequantizedGguf writes `path` only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/hf_tensor_names.h"

namespace pg {

// Whether the exporter stores `n` as FP8.
bool HfExportsAsFp8(const HfTensorName& n);

// Part e (an expert, or the whole matrix) of GGUF tensor t as an FP8
// checkpoint tensor in Hugging Face row order: n.shape E4M3 bytes and the
// [ceil(rows / 128), ceil(cols / 128)] scales.
struct Fp8Part {
  std::vector<uint8_t> fp8;
  std::vector<float> scales;
};
Result<Fp8Part> QuantizeHfPart(const GgufTensorInfo& t, const HfTensorName& n, size_t e);

// A copy of f (metadata and tensors) whose FP8-exported tensors hold, in F32,
// exactly the weights an FP8 export of f loads to (dequantized E4M3 times
// scale, in GGUF row order).
Status WriteFp8DequantizedGguf(const GgufFile& f, const std::string& path);

}  // namespace pg
