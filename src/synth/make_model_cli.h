// `prosgrow make-model`: the command-line front end of MakeModel.
//
//   prosgrow make-model --shape NAME --out FILE [--vocab FILE|builtin]
//                       [--type f16|bf16|q8_0|q4_k] [--arch llama|qwen2|qwen3]
//                       [--seed S] [--threads N]
//                       [--hf-dir DIR [--hf-shards N] [--hf-dtype same|fp8 [--hf-dequant-gguf FILE]]]
//
// argv[0] is the command name (ignored). Returns 0 on success (and for
// --help), 2 for bad arguments or a failure, with a one-line message on
// stderr.
//
// Thread-safety: call from one thread.
#pragma once

namespace pg {

int MakeModelMain(int argc, char** argv);

}  // namespace pg
