// GgufCorpus: small valid GGUF images made with GgufWriter, and corrupt
// variants derived from them byte by byte (truncations, wrong magic/version,
// absurd counts, lengths and dims, unknown types, bad offsets, duplicates).
//
// Used by the reader's corrupt-input tests, the CLI tests (which run
// `prosgrow` on the files WriteCorruptCorpus() leaves in a directory) and to
// seed the libFuzzer corpus.
//
// Thread-safety: pure functions (WriteCorruptCorpus writes files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

struct GgufCorpusCase {
  std::string name;            // file-name safe, e.g. "bad_magic"
  std::vector<uint8_t> bytes;  // the whole file image
  std::string expect;          // a substring the reader's error must contain
};

// A valid v3 file: a few metadata keys of each kind (scalars, string and
// numeric arrays) and two tensors (F32 [8,4] "token_embd.weight" and
// Q8_0 [32,2] "blk.0.attn_q.weight"). Deterministic.
std::vector<uint8_t> MakeValidGgufSample();
// Further valid samples: no tensors; Q4_K/Q6_K/F16/BF16 tensors.
std::vector<GgufCorpusCase> MakeValidGgufSamples();

// Every corrupt case derived from the valid sample. Each must be rejected.
std::vector<GgufCorpusCase> MakeCorruptGgufCases();

// Size of MakeValidGgufSample() without the zero padding after its last
// tensor: every shorter prefix is invalid, every longer one valid.
size_t ValidSampleDataEnd();

// Writes each corrupt case to dir/<name>.gguf (dir is created if needed).
Status WriteCorruptCorpus(const std::string& dir);
// Writes each valid sample to dir/valid_<name>.gguf.
Status WriteValidCorpus(const std::string& dir);

}  // namespace pg
