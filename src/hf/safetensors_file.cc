#include "hf/safetensors_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/bounded_json.h"
#include "hf/error_text.h"

namespace pg {
namespace {

// A header past this is refused before it is parsed (real ones: < 2 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
// {"t": {"shape": [..]}}: depth 3; a little room for __metadata__.
constexpr int kMaxHeaderDepth = 4;
constexpr size_t kMaxDims = 8;

struct DtypeRow {
  const char* name;
  SafeDtype type;
  size_t bytes;
};
constexpr DtypeRow kDtypes[] = {
    {"BF16", SafeDtype::kBF16, 2},
    {"F16", SafeDtype::kF16, 2},
    {"F32", SafeDtype::kF32, 4},
    {"F8_E4M3", SafeDtype::kF8_E4M3, 1},
};

// n_elements of `shape` times `elem`, or false on overflow / a negative dim.
bool ShapeBytes(const std::vector<int64_t>& shape, size_t elem, uint64_t* out) {
  uint64_t n = elem;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) return false;
    n *= static_cast<uint64_t>(d);
  }
  *out = n;
  return true;
}

}  // namespace

const char* SafeDtypeName(SafeDtype t) {
  for (const DtypeRow& r : kDtypes)
    if (r.type == t) return r.name;
  return "?";
}

size_t SafeDtypeBytes(SafeDtype t) {
  for (const DtypeRow& r : kDtypes)
    if (r.type == t) return r.bytes;
  return 0;
}

bool ParseSafeDtype(const std::string& name, SafeDtype* out) {
  for (const DtypeRow& r : kDtypes)
    if (name == r.name) {
      *out = r.type;
      return true;
    }
  return false;
}

int64_t SafeTensor::n_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  PG_ASSIGN_OR_RETURN(FileImage image, FileImage::Map(path));
  return Of(path, std::move(image));
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Of(const std::string& path, FileImage image) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  f->image_ = std::move(image);
  PG_RETURN_IF_ERROR(f->Parse());
  return f;
}

void SafetensorsFile::DropPages(const SafeTensor& t) const {
  if (!image_.mapped() || t.n_bytes == 0) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(t.data), end = begin + t.n_bytes;
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;  // whole pages inside
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::FromBuffer(const uint8_t* data, size_t size,
                                                                     const std::string& label) {
  return Of(label, FileImage::Copy(data, size));
}

const SafeTensor* SafetensorsFile::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Status SafetensorsFile::Parse() {
  auto bad = [&](const std::string& what) { return Corrupt(path_ + ": header: " + what); };
  const uint8_t* base = image_.data();
  const uint64_t size = image_.size();
  if (size < 8) return bad("file of " + std::to_string(size) + " bytes has no 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];  // little-endian
  if (n > size - 8) return bad("length " + std::to_string(n) + " runs past the end of the file (truncated?)");
  if (n > kMaxHeaderBytes) return bad("length " + std::to_string(n) + " is over the limit");
  nlohmann::json h;
  JsonParseError e =
      ParseBoundedJson(std::string_view(reinterpret_cast<const char*>(base + 8), n), kMaxHeaderDepth, &h);
  if (e.kind != JsonParseError::Kind::kNone) return bad("not valid JSON: " + e.message);
  if (!h.is_object()) return bad("not a JSON object");
  const uint64_t data_start = 8 + n, data_size = size - data_start;
  tensors_.reserve(h.size());
  for (const auto& item : h.items()) {
    const std::string& name = item.key();
    const nlohmann::json& v = item.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return bad("__metadata__ is not an object");
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) return bad("__metadata__ " + QuotedText(k) + " is not a string");
        metadata_[k] = s.get<std::string>();
      }
      continue;
    }
    auto field = [&](const std::string& what) { return bad("tensor " + QuotedText(name) + ": " + what); };
    if (!v.is_object()) return field("not an object");
    SafeTensor t;
    t.name = name;
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) return field("dtype missing or not a string");
    if (!ParseSafeDtype(dt->get<std::string>(), &t.dtype))
      return field("dtype " + QuotedText(dt->get<std::string>()) + " is not supported (BF16, F16, F32, F8_E4M3)");
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array() || sh->size() > kMaxDims) return field("shape missing or not an array");
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40)) return field("shape has a bad dimension");
      t.shape.push_back(d.get<int64_t>());
    }
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      return field("data_offsets missing or not [begin, end]");
    const uint64_t b = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (b > end || end > data_size)
      return field("data_offsets [" + std::to_string(b) + ", " + std::to_string(end) + "] outside the " +
                   std::to_string(data_size) + "-byte data section (truncated?)");
    uint64_t want = 0;
    if (!ShapeBytes(t.shape, SafeDtypeBytes(t.dtype), &want) || want != end - b)
      return field("data_offsets span " + std::to_string(end - b) + " bytes, dtype and shape make " +
                   std::to_string(want));
    t.offset = data_start + b;
    t.data = base + t.offset;
    t.n_bytes = want;
    index_[name] = tensors_.size();
    tensors_.push_back(std::move(t));
  }
  return Status::Ok();
}

}  // namespace pg
