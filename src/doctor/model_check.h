// The model-file check of `prosgrow doctor`: the GGUF file or Hugging Face
// directory (model_source.h) opens and validates,
// its architecture is one prosgrow runs, every tensor type has a kernel, and
// its tokenizer (pre-tokenizer included) loads. Reads metadata only; no
// weights are touched beyond the header. Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "doctor/check.h"
#include "model/model_config.h"

namespace pg {

class ModelSource;

struct ModelCheck {
  CheckResult result;
  uint64_t file_bytes = 0;            // 0 when the file could not be opened
  std::optional<ModelConfig> config;  // when the check passed
};

// `opened`: `path` already opened (serve's one open), else null.
ModelCheck CheckModelFile(const std::string& path, const ModelSource* opened = nullptr);

}  // namespace pg
