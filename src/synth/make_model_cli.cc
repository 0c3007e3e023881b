#include "synth/make_model_cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "base/cli_util.h"
#include "gguf/gguf_file.h"
#include "synth/hf_export.h"
#include "synth/hf_fp8_export.h"
#include "synth/make_model.h"
#include "synth/model_plan.h"

namespace pg {

int MakeModelMain(int argc, char** argv) {
  CLI::App app{"Write a GGUF model with seeded random weights in a real model's shape.", "prosgrow make-model"};
  MakeModelOptions opt;
  std::string type = "f16";
  app.add_option("--shape", opt.shape,
                 "tiny | 60m | 0.5b (Qwen2.5-0.5B layers) | 1.5b (Qwen2.5-1.5B layers) | "
                 "tiny-moe | 30b-a3b-mini (Qwen3-30B-A3B's proportions, scaled down; MoE shapes take "
                 "--arch qwen3moe or glm4moe) | glm5-mini (GLM-5.2's, glm-dsa) | deepseek-v3-mini "
                 "(DeepSeek-V3's, deepseek2); the MLA shapes pick their architecture")
      ->required();
  app.add_option("--out,-o", opt.out_path, "output GGUF path")->required();
  app.add_option("--vocab", opt.vocab_path,
                 "GGUF (vocab-only or full model) whose tokenizer.* keys are copied, or 'builtin'")
      ->capture_default_str();
  app.add_option("--type", type, "f16 | bf16 | q8_0 | q4_k (a Q4_K_M-like mix) | nvfp4 | fp8_e4m3 (prosgrow only)")
      ->capture_default_str();
  app.add_option("--arch", opt.arch, "llama | qwen2 | qwen3 | qwen3moe | glm4moe | glm-dsa | deepseek2")
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "random seed")->capture_default_str();
  app.add_option("--chat-template", opt.chat_template_path,
                 "file whose text becomes tokenizer.chat_template (default: the vocabulary's)");
  std::string hf_dir;
  HfExportOptions hf;
  app.add_option("--hf-dir", hf_dir,
                 "also write the same weights as a Hugging Face model directory (config.json + safetensors; "
                 "f16 / bf16 only)");
  app.add_option("--hf-shards", hf.shards, "safetensors shards of --hf-dir (> 1: with an index)")
      ->capture_default_str();
  std::string hf_dtype = "same", dequant_gguf;
  app.add_option("--hf-dtype", hf_dtype,
                 "same (the GGUF's precision) | fp8 (linear weights as E4M3 with 128x128-block "
                 "weight_scale_inv, as DeepSeek-V3 / Qwen3-FP8 ship)")
      ->check(CLI::IsMember({"same", "fp8"}))
      ->capture_default_str();
  app.add_option("--hf-dequant-gguf", dequant_gguf,
                 "with --hf-dtype fp8: also write a GGUF holding the FP8 weights' dequantized values in F32 "
                 "(what the FP8 directory loads to, to compare the two)");
  app.add_option("--threads", opt.n_threads, "generator threads (0 = all cores)")->capture_default_str();
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  auto t = ParseSynthType(type);
  if (!t.ok()) {
    std::fprintf(stderr, "prosgrow make-model: %s\n", t.status().message().c_str());
    return 2;
  }
  opt.type = *t;
  // The MLA shapes are written as one architecture each: --arch defaults to it.
  if (auto shape = FindModelShape(opt.shape); shape.ok() && shape->is_mla() && app.count("--arch") == 0)
    opt.arch = shape->mla.arch;
  if (opt.n_threads < 0) {
    std::fprintf(stderr, "prosgrow make-model: --threads must be >= 0\n");
    return 2;
  }
  hf.fp8 = hf_dtype == "fp8";
  if ((hf.fp8 || !dequant_gguf.empty()) && (hf_dir.empty() || (!hf.fp8 && !dequant_gguf.empty()))) {
    std::fprintf(stderr,
                 "prosgrow make-model: --hf-dtype fp8 needs --hf-dir, --hf-dequant-gguf needs --hf-dtype fp8\n");
    return 2;
  }
  Status st = MakeModel(opt);
  if (st.ok() && !hf_dir.empty()) {
    auto file = GgufFile::Open(opt.out_path);
    st = file.ok() ? ExportHfDir(**file, hf_dir, hf) : file.status();
    if (st.ok() && !dequant_gguf.empty()) st = WriteFp8DequantizedGguf(**file, dequant_gguf);
  }
  if (!st.ok()) {
    std::fprintf(stderr, "prosgrow make-model: %s\n", st.ToString().c_str());
    return 2;
  }
  return 0;
}

}  // namespace pg
