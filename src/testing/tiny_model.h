// A tiny synthetic model for end-to-end tests that run the engine in-process.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "gguf/ggml_type.h"
#include "synth/make_model.h"

namespace pg::test {

// A tiny random F16 qwen2 model with the built-in vocabulary, made once per
// machine and seed under the temp dir; written under a per-process name and
// renamed, so concurrent test processes never read a half-written file.
// "" if it cannot be made.
inline std::string TinyQwen2Model(uint64_t seed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "prosgrow-e2e-models";
  fs::create_directories(dir);
  const fs::path out = dir / ("tiny-qwen2-f16-seed" + std::to_string(seed) + ".gguf");
  if (fs::exists(out)) return out.string();
  MakeModelOptions o;
  o.shape = "tiny";
  o.vocab_path = "builtin";
  o.type = GgmlType::F16;
  o.arch = "qwen2";
  o.seed = seed;
  o.out_path = out.string() + ".tmp" + std::to_string(::getpid());
  if (!MakeModel(o).ok()) return std::string();
  fs::rename(o.out_path, out);
  return out.string();
}

}  // namespace pg::test
