// GgufWriter: builds a GGUF v3 file (metadata + tensors) and writes it.
//
// File layout written (little-endian):
//
//   u32 magic "GGUF" | u32 version=3 | u64 n_tensors | u64 n_kv
//   n_kv x   { string key | u32 value_type | value }
//   n_tensors x { string name | u32 n_dims | u64 dims[n_dims] | u32 ggml_type | u64 offset }
//   zero padding to general.alignment (32)
//   tensor data, each tensor starting at a multiple of the alignment
//   (offsets relative to the start of the data section), zero padded between.
//
// Strings are u64 length + bytes (no terminator). Arrays are u32 element type
// + u64 count + elements.
//
// Tensor bytes come either from a copy given up front or from a fill callback
// that produces a range of rows on demand, so multi-GB files are streamed:
// Write() fills chunks of a few MiB (in parallel when given a ThreadPool) and
// appends them to the file, never holding more than a bounded window in RAM.
// Write() goes to "<path>.tmp.<pid>.<n>" and renames it over `path` only
// after everything succeeded, so readers never see a partial file.
//
// Thread-safety: a writer is used from one thread. Fill callbacks may be
// called concurrently (for distinct row ranges) when Write() gets a pool.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_file.h"

namespace pg {

class ThreadPool;

class GgufWriter {
 public:
  // Fills rows [row_begin, row_begin + n_rows) of a tensor into dst, which has
  // n_rows * RowBytes(type, dims[0]) bytes. A "row" is dims[0] elements.
  using FillRows = std::function<Status(int64_t row_begin, int64_t n_rows, uint8_t* dst)>;

  static constexpr uint32_t kAlignment = 32;

  GgufWriter();

  // Metadata. Setting a key that exists replaces its value (order of first
  // insertion is kept). general.alignment is always written as u32 32;
  // setting it is ignored.
  void SetU8(const std::string& key, uint8_t v);
  void SetI8(const std::string& key, int8_t v);
  void SetU16(const std::string& key, uint16_t v);
  void SetI16(const std::string& key, int16_t v);
  void SetU32(const std::string& key, uint32_t v);
  void SetI32(const std::string& key, int32_t v);
  void SetU64(const std::string& key, uint64_t v);
  void SetI64(const std::string& key, int64_t v);
  void SetF32(const std::string& key, float v);
  void SetF64(const std::string& key, double v);
  void SetBool(const std::string& key, bool v);
  void SetString(const std::string& key, const std::string& v);
  void SetStringArray(const std::string& key, const std::vector<std::string>& v);
  void SetI32Array(const std::string& key, const std::vector<int32_t>& v);
  void SetI64Array(const std::string& key, const std::vector<int64_t>& v);
  void SetU32Array(const std::string& key, const std::vector<uint32_t>& v);
  void SetF32Array(const std::string& key, const std::vector<float>& v);
  void SetBoolArray(const std::string& key, const std::vector<bool>& v);
  // Any value as read by GgufFile (keeps its original type), e.g. to copy
  // tokenizer.* keys from another file. InvalidArgument if the value's
  // variant does not match its declared type.
  Status SetValue(const std::string& key, const GgufValue& v);
  bool HasKey(const std::string& key) const;

  // Tensors, written in the order added. dims[0] is the contiguous (row)
  // dimension and must be a multiple of the type's block size; 1..4 dims.
  // InvalidArgument on a duplicate name, bad dims or a size mismatch.
  Status AddTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  Status AddTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims, FillRows fill);
  size_t tensor_count() const { return tensors_.size(); }
  // Total bytes of the file Write() would produce.
  uint64_t FileSize() const;

  // Writes atomically (temp file + rename). pool may be null (serial fill).
  Status Write(const std::string& path, ThreadPool* pool = nullptr) const;
  // The whole file image in memory (small files: tests, fuzz seeds).
  Result<std::vector<uint8_t>> WriteToBuffer() const;

 private:
  struct Kv {
    std::string key;
    GgufValue value;
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    uint64_t n_bytes = 0;
    uint64_t offset = 0;         // relative to the data section
    std::vector<uint8_t> bytes;  // when given up front
    FillRows fill;               // otherwise
  };

  void Set(const std::string& key, GgufValue v);
  Status CheckTensor(const std::string& name, GgmlType type, const std::vector<int64_t>& dims, uint64_t* n_bytes) const;
  std::vector<uint8_t> EncodeHeader() const;  // up to and including the padding
  // Streams the whole file through sink(data, n).
  Status Emit(const std::function<Status(const uint8_t*, size_t)>& sink, ThreadPool* pool) const;

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
  uint64_t data_bytes_ = 0;  // size of the data section (aligned)
};

}  // namespace pg
