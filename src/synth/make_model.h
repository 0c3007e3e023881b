// MakeModel: writes a GGUF model with seeded random weights in a real
// model's shape (see model_plan.h), with the tokenizer of a vocab file or the
// builtin vocabulary (synth_vocab.h), loadable by prosgrow and llama.cpp.
//
// Tensors are generated row range by row range on a thread pool and streamed
// to disk (gguf_writer.h), so a 1.5b F16 file (~3 GB) needs ~100 MB of RAM.
// Same options => identical bytes, whatever the thread count.
//
// Thread-safety: MakeModel / EnsureDefaultModel may run concurrently (also
// across processes): each writes a private temp file and renames it.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "gguf/ggml_type.h"
#include "synth/model_plan.h"

namespace pg {

struct MakeModelOptions {
  std::string shape = "tiny";          // tiny | 60m | 0.5b | 1.5b | tiny-moe | 30b-a3b-mini
  std::string vocab_path = "builtin";  // a GGUF to copy tokenizer.* from, or "builtin"
  GgmlType type = GgmlType::F16;       // F16, BF16, Q8_0, Q4_K (Q4_K_M-like mix), NVFP4, FP8_E4M3
  std::string arch = "qwen2";          // llama | qwen2 | qwen3 (dense); qwen3moe | glm4moe (MoE shapes)
  uint64_t seed = 0;
  std::string out_path;
  int n_threads = 0;  // 0 = all cores
  // A file whose text replaces the vocabulary's tokenizer.chat_template
  // ("" = keep the vocabulary's), e.g. to give a test model another
  // template's tool-call format.
  std::string chat_template_path;
};

// The plan MakeModel would write for these options (reads the vocab file,
// or trains the builtin vocabulary, to learn the vocab size).
Result<ModelPlan> PlanModelFor(const MakeModelOptions& opt);

Status MakeModel(const MakeModelOptions& opt);

// The options of the project's default model: shape 60m, builtin
// vocabulary, Q8_0, qwen2, seed 0 (~32M parameters, ~34 MB).
MakeModelOptions DefaultModelOptions();

// $XDG_CACHE_HOME/prosgrow, else $HOME/.cache/prosgrow, else ./.cache/prosgrow.
std::string DefaultCacheDir();

// Returns the path of the default model under cache_dir ("" = the default
// cache dir), generating it first if it is absent or unreadable.
Result<std::string> EnsureDefaultModel(const std::string& cache_dir);

}  // namespace pg
