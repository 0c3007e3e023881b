// HfModelSource: a Hugging Face model directory (hf/hf_dir.h) as a
// ModelSource. config.json becomes the ModelConfig (hf_model_config.h); the
// checkpoint's tensors are checked against it (presence, shape, dtype) and
// renamed to the model's GGUF names (hf_tensor_names.h). Tensors stay in the
// shards' mappings, except llama's q/k (rows reordered for its rope), expert
// stacks whose experts do not lie back to back in one shard, and FP8 weights
// (quant_method fp8: E4M3 bytes with their scales, packed at 1.0625 bytes per
// weight into the FP8_E4M3 type the CPU kernels read, hf_fp8_tensor.h): those
// are copied, once, at open.
//
// Open() checks everything before it returns, so nothing starts half-loaded;
// errors are one line naming the file (config.json, a shard, the index) and
// the field or tensor.
//
// Thread-safety: immutable after Open(); safe to share across threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hf/hf_dir.h"
#include "model/hf_model_config.h"
#include "model/model_source.h"

namespace pg {

class HfModelSource final : public ModelSource {
 public:
  static Result<std::unique_ptr<HfModelSource>> Open(const std::string& dir);

  const std::string& path() const override { return dir_->path(); }
  const char* format() const override { return "safetensors"; }
  uint64_t size_bytes() const override { return dir_->total_bytes(); }
  Result<ModelConfig> Config() const override { return config_; }
  const std::vector<TensorInfo>& tensors() const override { return tensors_; }
  const TensorInfo* FindTensor(const std::string& name) const override;
  bool Owns(const void* p) const override;
  // From tokenizer.json (the tokenizer module's reader).
  Result<std::unique_ptr<Tokenizer>> LoadTokenizer() const override;
  std::string chat_template() const override { return dir_->chat_template(); }
  // generation_config.json's temperature, top_p, top_k, min_p, repetition_penalty.
  SamplingDefaults sampling_defaults() const override;

  const HfDir& dir() const { return *dir_; }

 private:
  HfModelSource() = default;
  Status ReadConfig();
  // One model tensor from its checkpoint tensor(s).
  Status AddTensor(const struct HfTensorName& t, const std::string& dtype);
  // The parts' stack packed as FP8_E4M3 (hf_fp8_tensor.h) into an owned buffer.
  Status PackFp8(const std::vector<const SafeTensor*>& parts, TensorInfo* info);

  std::unique_ptr<HfDir> dir_;
  ModelConfig config_;
  std::optional<HfFp8Config> fp8_;  // quantization_config.quant_method "fp8"
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_;
  std::vector<std::vector<uint8_t>> owned_;  // reordered q/k rows, gathered expert stacks
};

}  // namespace pg
