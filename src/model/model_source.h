// ModelSource: where a Model's tensors and metadata come from, whatever the
// file format: one seam, two readers.
//
//   GGUF file          -> GgufModelSource (this file): the file's own tensors
//   Hugging Face dir   -> HfModelSource (hf_model_source.h): config.json and
//                         safetensors shards, renamed and laid out as GGUF's
//
// Every source hands the model the same things: a ModelConfig, and tensors
// under their GGUF names ("blk.0.attn_q.weight") in GGUF's layout (dims[0]
// contiguous, llama's q/k rows in llama.cpp's rope order, expert stacks 3-D),
// so ModelWeights and the forward pass never ask which format it was. The
// tensors' bytes stay in the files' mappings wherever the layouts agree.
//
// Thread-safety: immutable after opening; safe to share across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/sampling_defaults.h"
#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace pg {

class Tokenizer;

// The tensor view every source produces (GGUF's descriptor: name, type, ne
// order dims, bytes). `offset` is the tensor's offset in its file.
using TensorInfo = GgufTensorInfo;

class ModelSource {
 public:
  virtual ~ModelSource() = default;

  // The file or directory opened; error messages start with it.
  virtual const std::string& path() const = 0;
  // The weights' storage format ("gguf", "safetensors"), part of the model
  // identity: two formats never share K/V blocks.
  virtual const char* format() const = 0;
  virtual uint64_t size_bytes() const = 0;  // of the file(s)

  // The hyperparameters; one-line errors naming the file and the field.
  virtual Result<ModelConfig> Config() const = 0;
  // Every tensor, GGUF names and layout (see above).
  virtual const std::vector<TensorInfo>& tensors() const = 0;
  virtual const TensorInfo* FindTensor(const std::string& name) const = 0;

  // The tokenizer this model was trained with.
  virtual Result<std::unique_ptr<Tokenizer>> LoadTokenizer() const = 0;
  // The chat template ("" if the model has none).
  virtual std::string chat_template() const = 0;
  // The model's default sampling (a Hugging Face directory's
  // generation_config.json; none for a GGUF).
  virtual SamplingDefaults sampling_defaults() const { return {}; }
  // The GGUF file behind the source, or null for other formats.
  virtual const GgufFile* gguf() const { return nullptr; }
  // Whether `p` lies in memory the source filled itself (a tensor converted
  // or reordered at open) rather than in a file's mapping. Such a tensor is
  // not repacked: its pages cannot be dropped and read again from the file,
  // and later readers of the source (the model identity, the device upload)
  // need them.
  virtual bool Owns(const void* p) const { return false; }
};

class GgufModelSource final : public ModelSource {
 public:
  explicit GgufModelSource(std::shared_ptr<const GgufFile> file) : file_(std::move(file)) {}

  const std::string& path() const override { return file_->path(); }
  const char* format() const override { return "gguf"; }
  uint64_t size_bytes() const override { return file_->file_size(); }
  Result<ModelConfig> Config() const override { return ModelConfig::FromGguf(*file_); }
  const std::vector<TensorInfo>& tensors() const override { return file_->tensors(); }
  const TensorInfo* FindTensor(const std::string& name) const override { return file_->FindTensor(name); }
  Result<std::unique_ptr<Tokenizer>> LoadTokenizer() const override;
  std::string chat_template() const override { return file_->GetStringOr("tokenizer.chat_template", ""); }
  const GgufFile* gguf() const override { return file_.get(); }

 private:
  std::shared_ptr<const GgufFile> file_;
};

// A directory holding config.json: a Hugging Face model (HfModelSource);
// anything else: a GGUF file.
bool IsHfModelDir(const std::string& path);
// The name a model is served under: a GGUF file's stem, a Hugging Face
// directory's name ("Qwen3-0.6B", not "Qwen3-0"; a trailing '/' ignored).
std::string ServedModelName(const std::string& path);
Result<std::shared_ptr<const ModelSource>> OpenModelSource(const std::string& path);

}  // namespace pg
