#include "doctor/model_check.h"

#include <fmt/format.h>

#include <map>
#include <memory>

#include "backend/cpu/quant.h"
#include "base/units.h"
#include "gguf/ggml_type.h"
#include "model/model_config.h"
#include "model/model_source.h"
#include "tokenizer/tokenizer.h"

namespace pg {

ModelCheck CheckModelFile(const std::string& path, const ModelSource* opened) {
  const char* name = "model";
  ModelCheck out;
  std::shared_ptr<const ModelSource> own;
  if (opened == nullptr) {
    auto source = OpenModelSource(path);
    if (!source.ok()) {
      out.result = CheckResult::Fail(name, source.status().message(),
                                     "pass a readable GGUF file or Hugging Face model directory with -m");
      return out;
    }
    own = std::move(*source);
    opened = own.get();
  }
  const ModelSource& f = *opened;
  out.file_bytes = f.size_bytes();
  auto config = f.Config();
  if (!config.ok()) {
    out.result = CheckResult::Fail(name, config.status().message(),
                                   "use a llama, qwen2, qwen3, qwen3moe or glm4moe GGUF or Hugging Face directory");
    return out;
  }
  std::map<std::string, int> types;  // type name -> tensor count
  for (const TensorInfo& t : f.tensors()) {
    ++types[TypeName(t.type)];
    if (t.dims.size() >= 2 && !IsSupportedWeightType(t.type)) {
      out.result = CheckResult::Fail(
          name, fmt::format("{}: tensor {} has type {}, which no kernel handles", path, t.name, TypeName(t.type)),
          "requantize it with llama-quantize to a supported type (docs/performance.md)");
      return out;
    }
  }
  auto tokenizer = f.LoadTokenizer();
  if (!tokenizer.ok()) {
    out.result = CheckResult::Fail(name, tokenizer.status().message(),
                                   "use a GGUF whose tokenizer.ggml.pre prosgrow implements (docs/architecture.md)");
    return out;
  }
  std::string mix;
  for (const auto& [type, n] : types) mix += fmt::format("{}{} x{}", mix.empty() ? "" : ", ", type, n);
  out.result = CheckResult::Ok(name, fmt::format("{} ({}): arch {}, {} layers, vocab {}, pre-tokenizer '{}'; "
                                                 "tensors {}",
                                                 path, FormatBytes(out.file_bytes), config->arch, config->n_layer,
                                                 (*tokenizer)->n_vocab(), (*tokenizer)->pre(), mix));
  out.config = std::move(*config);
  return out;
}

}  // namespace pg
