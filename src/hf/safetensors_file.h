// SafetensorsFile: a read-only, memory-mapped safetensors file.
//
// Layout (the format Hugging Face checkpoints use):
//
//   | u64 LE: header length N | N bytes of JSON header | tensor data ... |
//
// The header is one JSON object: "__metadata__" (an object of strings,
// optional) and, per tensor, {"dtype": "BF16", "shape": [rows, cols],
// "data_offsets": [begin, end]}, offsets relative to the data section.
// Shapes are outermost-first ([out, in] for a linear layer's weight, row-major:
// GGUF's ne0 is the last entry).
//
// Open() validates the whole header up front: its length against the file,
// the JSON (depth-bounded), every tensor's dtype, shape and byte range (inside
// the data section, and exactly the size its dtype and shape make). After
// Open() succeeds, every accessor is safe. Errors are one line starting with
// the path and naming the field.
//
// Thread-safety: immutable after Open(); safe to share across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/file_image.h"
#include "base/status.h"

namespace pg {

// The dtypes prosgrow reads. F8_E4M3 is parsed and kept (raw bytes) for FP8
// checkpoints; no kernel reads it yet.
enum class SafeDtype { kBF16, kF16, kF32, kF8_E4M3 };

const char* SafeDtypeName(SafeDtype t);
size_t SafeDtypeBytes(SafeDtype t);
// "BF16" -> kBF16 ...; false for any other name.
bool ParseSafeDtype(const std::string& name, SafeDtype* out);

struct SafeTensor {
  std::string name;
  SafeDtype dtype = SafeDtype::kF32;
  std::vector<int64_t> shape;     // outermost first; the last entry is contiguous
  const uint8_t* data = nullptr;  // into the mapping
  uint64_t n_bytes = 0;
  uint64_t offset = 0;  // from the start of the file

  int64_t n_elements() const;
};

class SafetensorsFile {
 public:
  ~SafetensorsFile() = default;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  static Result<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  // Parses an in-memory image (copied). Used by the fuzzer and tests.
  static Result<std::unique_ptr<SafetensorsFile>> FromBuffer(const uint8_t* data, size_t size,
                                                             const std::string& label = "<buffer>");

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return image_.size(); }
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const SafeTensor* Find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Hands t's whole pages back to the kernel (madvise MADV_DONTNEED), for a
  // caller that has copied the tensor (FP8 packing): they leave the resident
  // set; reading t again faults them back in from the file. No-op for a buffer.
  void DropPages(const SafeTensor& t) const;

 private:
  SafetensorsFile() = default;
  // The file of `image`, parsed; `path` names it in errors.
  static Result<std::unique_ptr<SafetensorsFile>> Of(const std::string& path, FileImage image);
  Status Parse();

  std::string path_;
  FileImage image_;  // mapped (Open) or copied (FromBuffer)
  std::vector<SafeTensor> tensors_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace pg
