// FileImage: a file's bytes for a reader that parses them in place (the GGUF
// and safetensors readers): a regular file mapped read-only and shared, so
// the weights stay in the page cache, or a copy of a buffer (fuzzers, tests).
//
// Thread-safety: immutable after Map/Copy; movable, not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace pg {

class FileImage {
 public:
  // Errors start with the path: IoError when it cannot be opened, stat'ed or
  // mapped, InvalidArgument when it is not a regular file. An empty file is
  // an image of size 0 (the caller says what is too short).
  static Result<FileImage> Map(const std::string& path);
  static FileImage Copy(const uint8_t* data, size_t size);

  FileImage() = default;
  FileImage(FileImage&& o) noexcept { *this = std::move(o); }
  FileImage& operator=(FileImage&& o) noexcept;
  FileImage(const FileImage&) = delete;
  FileImage& operator=(const FileImage&) = delete;
  ~FileImage();

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // True for a mapping (its pages can be handed back), false for a copy.
  bool mapped() const { return map_ != nullptr; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* map_ = nullptr;         // the mapping (null for a copy or an empty file)
  std::vector<uint8_t> owned_;  // the copy
};

}  // namespace pg
