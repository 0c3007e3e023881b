// ExportHfDir: writes a GGUF model's weights as a Hugging Face model
// directory (config.json, safetensors, generation_config.json,
// tokenizer_config.json), the layout a checkpoint on the hub has and
// HfModelSource reads. With the tensor map of model/hf_tensor_names.h run
// backwards: expert stacks split into one tensor per expert, llama's q/k rows
// put back in Hugging Face's rope order. Values are copied bit for bit, so a
// BF16 GGUF and its export load to the same weights (the test compares their
// logits). F32, F16 and BF16 tensors only (what safetensors checkpoints hold).
// With `fp8`, the linear weights are quantized instead (hf_fp8_export.h);
// WriteFp8DequantizedGguf writes the GGUF those load to.
//
// `prosgrow make-model --hf-dir DIR` writes one beside the GGUF it makes.
// tokenizer.json is written for a byte-level BPE vocabulary with Qwen2's
// pre-tokenizer (the builtin one), from the GGUF's tokens and merges; other
// vocabularies get none.
//
// Thread-safety: writes `dir` only.
#pragma once

#include <string>

#include "base/status.h"

namespace pg {

class GgufFile;

struct HfExportOptions {
  int shards = 1;  // > 1: model-0000i-of-0000N.safetensors + model.safetensors.index.json
  // The layers' linear weights as FP8 E4M3 with 128x128-block
  // weight_scale_inv and config.json's quantization_config (quant_method
  // fp8), as DeepSeek-V3 / Qwen3-FP8 checkpoints ship (hf_fp8_export.h).
  bool fp8 = false;
};

Status ExportHfDir(const GgufFile& gguf, const std::string& dir, const HfExportOptions& options = {});

}  // namespace pg
