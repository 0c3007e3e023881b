// WriteSafetensors: writes tensors as one safetensors file (the layout in
// safetensors_file.h), header padded with spaces to a multiple of 8 bytes as
// Hugging Face's writer pads it, tensors back to back in the order given.
// Thread-safety: a pure function of its arguments (writes `path` only).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "hf/safetensors_file.h"

namespace pg {

struct SafeTensorOut {
  std::string name;
  SafeDtype dtype = SafeDtype::kF32;
  std::vector<int64_t> shape;  // outermost first
  std::vector<uint8_t> bytes;  // row-major, n_elements * SafeDtypeBytes(dtype)
};

// The file's bytes (header and data), for tests that corrupt them.
Result<std::vector<uint8_t>> SafetensorsImage(const std::vector<SafeTensorOut>& tensors,
                                              const std::map<std::string, std::string>& metadata = {});

Status WriteSafetensors(const std::string& path, const std::vector<SafeTensorOut>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace pg
