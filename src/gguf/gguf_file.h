// GgufFile: a read-only, memory-mapped GGUF (v2/v3) file.
//
// Open() validates the whole header up front: magic, version, every
// metadata key/value, every tensor descriptor (name, dims, type, offset) and
// that every tensor's bytes lie inside the file. Counts, string lengths and
// dims are checked against the bytes that remain before anything is
// allocated, so a hostile file cannot trigger a huge allocation. After Open()
// succeeds, every accessor is safe.
//
// Thread-safety: immutable after Open(); safe to share across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/file_image.h"
#include "base/status.h"
#include "gguf/ggml_type.h"

namespace pg {

enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

// The value-type families (a GgufValue widens them to int64 / uint64 / double).
inline bool IsSignedType(GgufValueType t) {
  return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
         t == GgufValueType::INT64;
}
inline bool IsUnsignedType(GgufValueType t) {
  return t == GgufValueType::UINT8 || t == GgufValueType::UINT16 || t == GgufValueType::UINT32 ||
         t == GgufValueType::UINT64;
}
inline bool IsFloatType(GgufValueType t) { return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64; }

// A metadata value. Arrays hold one element vector of the element type.
struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  GgufValueType array_type = GgufValueType::UINT8;  // element type when type == ARRAY
  // Scalars: integers widen to int64/uint64, floats to double.
  std::variant<std::monostate, int64_t, uint64_t, double, bool, std::string, std::vector<int64_t>,
               std::vector<uint64_t>, std::vector<double>, std::vector<bool>, std::vector<std::string>>
      v;

  bool is_array() const { return type == GgufValueType::ARRAY; }
  size_t array_size() const;
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> dims;      // ne[0] is the contiguous (row) dimension
  uint64_t offset = 0;            // relative to the data section
  const uint8_t* data = nullptr;  // into the mapping
  uint64_t n_bytes = 0;

  int64_t n_elements() const;
  int64_t rows() const { return n_elements() / (dims.empty() ? 1 : dims[0]); }
};

class GgufFile {
 public:
  ~GgufFile() = default;
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  // Maps and validates. Errors are one line, starting with the path.
  static Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses an in-memory image (copied). Used by the fuzzer and tests.
  static Result<std::unique_ptr<GgufFile>> FromBuffer(const uint8_t* data, size_t size,
                                                      const std::string& label = "<buffer>");

  uint32_t version() const { return version_; }
  const std::string& path() const { return path_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t file_size() const { return image_.size(); }

  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const GgufValue* Find(const std::string& key) const;

  // Typed getters: NotFound if absent, InvalidArgument if the type differs.
  // Integer getters accept any integer type whose value fits.
  Result<std::string> GetString(const std::string& key) const;
  Result<int64_t> GetInt(const std::string& key) const;
  Result<double> GetFloat(const std::string& key) const;  // accepts ints too
  Result<bool> GetBool(const std::string& key) const;
  Result<std::vector<std::string>> GetStringArray(const std::string& key) const;
  Result<std::vector<double>> GetFloatArray(const std::string& key) const;  // ints widen
  Result<std::vector<int64_t>> GetIntArray(const std::string& key) const;
  // Convenience with defaults (absent key -> default; wrong type -> default).
  int64_t GetIntOr(const std::string& key, int64_t def) const;
  double GetFloatOr(const std::string& key, double def) const;
  bool GetBoolOr(const std::string& key, bool def) const;
  std::string GetStringOr(const std::string& key, const std::string& def) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(const std::string& name) const;

 private:
  GgufFile() = default;
  // The file of `image`, parsed; `path` names it in errors.
  static Result<std::unique_ptr<GgufFile>> Of(const std::string& path, FileImage image);
  Status Parse();
  // Find(key), or NotFound naming the file and the key.
  Result<const GgufValue*> Require(const std::string& key) const;
  // InvalidArgument: the value under `key` is not `what` ("a string", ...).
  Status NotA(const std::string& key, const char* what) const;
  // The value under `key` where it holds a T (a scalar T only if not an array).
  template <typename T>
  Result<T> GetHeld(const std::string& key, const char* what) const;

  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  FileImage image_;  // mapped (Open) or copied (FromBuffer)
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace pg
