#include "gguf/gguf_file.h"

#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/quoted_text.h"

namespace pg {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kMaxDims = 4;
constexpr uint64_t kMaxStringBytes = 1ull << 30;  // a single string in metadata
constexpr int64_t kMaxElements = int64_t{1} << 50;

// Bounds-checked cursor over the file image.
class Cursor {
 public:
  Cursor(const uint8_t* p, uint64_t n) : p_(p), n_(n) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return n_ - pos_; }

  template <typename T>
  bool Read(T* out) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(out, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool ReadString(std::string* out) {
    uint64_t len;
    if (!Read(&len)) return false;
    if (len > remaining() || len > kMaxStringBytes) return false;
    out->assign(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return true;
  }
  bool Skip(uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* p_;
  uint64_t n_;
  uint64_t pos_ = 0;
};

// Minimum encoded size of one element of a value type (for count sanity checks).
uint64_t MinEncodedSize(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64: return 8;
    case GgufValueType::STRING: return 8;
    case GgufValueType::ARRAY: return 12;
  }
  return 1;
}

bool ValidValueType(uint32_t t) { return t <= 12; }

// Reads one T from the file and stores it widened to Out (the value's variant type).
template <typename T, typename Out>
bool ReadAs(Cursor& c, GgufValue* out) {
  T v;
  if (!c.Read(&v)) return false;
  out->v = Out(v);
  return true;
}

// Reads one scalar of type t as int64/uint64/double/bool/string.
bool ReadScalar(Cursor& c, GgufValueType t, GgufValue* out) {
  switch (t) {
    case GgufValueType::UINT8: return ReadAs<uint8_t, uint64_t>(c, out);
    case GgufValueType::INT8: return ReadAs<int8_t, int64_t>(c, out);
    case GgufValueType::UINT16: return ReadAs<uint16_t, uint64_t>(c, out);
    case GgufValueType::INT16: return ReadAs<int16_t, int64_t>(c, out);
    case GgufValueType::UINT32: return ReadAs<uint32_t, uint64_t>(c, out);
    case GgufValueType::INT32: return ReadAs<int32_t, int64_t>(c, out);
    case GgufValueType::UINT64: return ReadAs<uint64_t, uint64_t>(c, out);
    case GgufValueType::INT64: return ReadAs<int64_t, int64_t>(c, out);
    case GgufValueType::FLOAT32: return ReadAs<float, double>(c, out);
    case GgufValueType::FLOAT64: return ReadAs<double, double>(c, out);
    case GgufValueType::BOOL: return ReadAs<uint8_t, bool>(c, out);
    case GgufValueType::STRING: {
      std::string s;
      if (!c.ReadString(&s)) return false;
      out->v = std::move(s);
      return true;
    }
    case GgufValueType::ARRAY: return false;
  }
  return false;
}

// Reads n scalars of type t into the array value's vector<Elem>.
template <typename Elem>
bool ReadElements(Cursor& c, GgufValueType t, uint64_t n, GgufValue* out) {
  std::vector<Elem> v;
  v.reserve(n);
  GgufValue tmp;
  for (uint64_t i = 0; i < n; ++i) {
    if (!ReadScalar(c, t, &tmp)) return false;
    v.push_back(std::get<Elem>(std::move(tmp.v)));
  }
  out->v = std::move(v);
  return true;
}

bool ReadArray(Cursor& c, GgufValue* out, std::string* err) {
  uint32_t et;
  uint64_t n;
  if (!c.Read(&et) || !c.Read(&n)) {
    *err = "truncated array header";
    return false;
  }
  if (!ValidValueType(et)) {
    *err = "unknown array element type " + std::to_string(et);
    return false;
  }
  auto t = static_cast<GgufValueType>(et);
  if (t == GgufValueType::ARRAY) {
    *err = "nested arrays are not supported";
    return false;
  }
  if (n > c.remaining() / MinEncodedSize(t)) {
    *err = "array count " + std::to_string(n) + " exceeds the file size";
    return false;
  }
  out->array_type = t;
  bool ok;
  if (IsSignedType(t)) {
    ok = ReadElements<int64_t>(c, t, n, out);
  } else if (IsUnsignedType(t)) {
    ok = ReadElements<uint64_t>(c, t, n, out);
  } else if (IsFloatType(t)) {
    ok = ReadElements<double>(c, t, n, out);
  } else if (t == GgufValueType::BOOL) {
    ok = ReadElements<bool>(c, t, n, out);
  } else {
    ok = ReadElements<std::string>(c, t, n, out);
  }
  if (!ok) *err = t == GgufValueType::STRING ? "truncated or oversized string in array" : "truncated array";
  return ok;
}

}  // namespace

size_t GgufValue::array_size() const {
  return std::visit(
      [](const auto& x) -> size_t {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::vector<int64_t>> || std::is_same_v<X, std::vector<uint64_t>> ||
                      std::is_same_v<X, std::vector<double>> || std::is_same_v<X, std::vector<bool>> ||
                      std::is_same_v<X, std::vector<std::string>>)
          return x.size();
        else
          return 0;
      },
      v);
}

int64_t GgufTensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  PG_ASSIGN_OR_RETURN(FileImage image, FileImage::Map(path));
  if (image.size() < 24) return Corrupt(path + ": not a GGUF file (only " + std::to_string(image.size()) + " bytes)");
  return Of(path, std::move(image));
}

Result<std::unique_ptr<GgufFile>> GgufFile::FromBuffer(const uint8_t* data, size_t size, const std::string& label) {
  return Of(label, FileImage::Copy(data, size));
}

Result<std::unique_ptr<GgufFile>> GgufFile::Of(const std::string& path, FileImage image) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->image_ = std::move(image);
  PG_RETURN_IF_ERROR(f->Parse());
  return f;
}

namespace {

// The steps of GgufFile::Parse. Errors are kCorrupt, prefixed with the path.
Status CorruptIn(const std::string& path, const std::string& what) { return Corrupt(path + ": " + what); }

// n_kv key/value pairs; keys must be unique.
Status ReadMetadata(Cursor& c, uint64_t n_kv, const std::string& path, std::map<std::string, GgufValue>* kv) {
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    if (!c.ReadString(&key)) return CorruptIn(path, "truncated metadata key #" + std::to_string(i));
    uint32_t vt;
    if (!c.Read(&vt)) return CorruptIn(path, "truncated metadata " + QuotedText(key));
    if (!ValidValueType(vt))
      return CorruptIn(path, "metadata " + QuotedText(key) + " has unknown value type " + std::to_string(vt));
    GgufValue val;
    val.type = static_cast<GgufValueType>(vt);
    if (val.type == GgufValueType::ARRAY) {
      std::string err;
      if (!ReadArray(c, &val, &err)) return CorruptIn(path, "metadata " + QuotedText(key) + ": " + err);
    } else if (!ReadScalar(c, val.type, &val)) {
      return CorruptIn(path, "truncated metadata " + QuotedText(key));
    }
    if (kv->count(key)) return CorruptIn(path, "duplicate metadata key " + QuotedText(key));
    kv->emplace(std::move(key), std::move(val));
  }
  return Status::Ok();
}

// general.alignment, when present: a power of two <= 65536.
Status ReadAlignment(const GgufValue* a, const std::string& path, uint64_t* alignment) {
  if (!a) return Status::Ok();
  uint64_t al = 0;
  if (auto* u = std::get_if<uint64_t>(&a->v))
    al = *u;
  else if (auto* s = std::get_if<int64_t>(&a->v); s && *s > 0)
    al = static_cast<uint64_t>(*s);
  if (al == 0 || (al & (al - 1)) != 0 || al > 65536)
    return CorruptIn(path, "general.alignment must be a power of two <= 65536");
  *alignment = al;
  return Status::Ok();
}

// Tensor info #i: name, dims, type and offset; n_bytes from them.
Status ReadTensorInfo(Cursor& c, uint64_t i, const std::string& path, GgufTensorInfo* t) {
  if (!c.ReadString(&t->name)) return CorruptIn(path, "truncated tensor info #" + std::to_string(i));
  uint32_t n_dims;
  if (!c.Read(&n_dims)) return CorruptIn(path, "truncated tensor " + QuotedText(t->name));
  if (n_dims == 0 || n_dims > kMaxDims)
    return CorruptIn(path, "tensor " + QuotedText(t->name) + " has " + std::to_string(n_dims) + " dims (1..4 allowed)");
  int64_t n_el = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t ne;
    if (!c.Read(&ne)) return CorruptIn(path, "truncated tensor " + QuotedText(t->name));
    if (ne == 0 || ne > static_cast<uint64_t>(kMaxElements) || n_el > kMaxElements / static_cast<int64_t>(ne))
      return CorruptIn(path, "tensor " + QuotedText(t->name) + " has an absurd dimension " + std::to_string(ne));
    n_el *= static_cast<int64_t>(ne);
    t->dims.push_back(static_cast<int64_t>(ne));
  }
  uint32_t type;
  if (!c.Read(&type)) return CorruptIn(path, "truncated tensor " + QuotedText(t->name));
  const GgmlTypeInfo* info = GgmlTypeInfoFor(type);
  if (!info) return CorruptIn(path, "tensor " + QuotedText(t->name) + " has unknown type " + std::to_string(type));
  t->type = static_cast<GgmlType>(type);
  if (t->dims[0] % info->block_elems != 0)
    return CorruptIn(path, "tensor " + QuotedText(t->name) + " row of " + std::to_string(t->dims[0]) +
                               " is not a multiple of the " + info->name + " block size");
  if (!c.Read(&t->offset)) return CorruptIn(path, "truncated tensor " + QuotedText(t->name));
  t->n_bytes = static_cast<uint64_t>(n_el / info->block_elems) * info->block_bytes;
  return Status::Ok();
}

}  // namespace

Status GgufFile::Parse() {
  auto fail = [&](const std::string& what) { return CorruptIn(path_, what); };
  Cursor c(image_.data(), image_.size());
  uint32_t magic = 0;
  if (!c.Read(&magic)) return fail("truncated header");
  if (magic != kMagic) return fail("bad magic (not a GGUF file)");
  if (!c.Read(&version_)) return fail("truncated header");
  if (version_ != 2 && version_ != 3)
    return fail("unsupported GGUF version " + std::to_string(version_) + " (need 2 or 3)");
  uint64_t n_tensors = 0, n_kv = 0;
  if (!c.Read(&n_tensors) || !c.Read(&n_kv)) return fail("truncated header");
  // Each KV needs >= 8 (key len) + 4 (type) + 1 bytes; each tensor >= 8+4+8+4+8.
  if (n_kv > c.remaining() / 13) return fail("metadata count " + std::to_string(n_kv) + " exceeds the file size");
  if (n_tensors > c.remaining() / 32)
    return fail("tensor count " + std::to_string(n_tensors) + " exceeds the file size");

  PG_RETURN_IF_ERROR(ReadMetadata(c, n_kv, path_, &kv_));
  PG_RETURN_IF_ERROR(ReadAlignment(Find("general.alignment"), path_, &alignment_));

  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    PG_RETURN_IF_ERROR(ReadTensorInfo(c, i, path_, &t));
    if (tensor_index_.count(t.name)) return fail("duplicate tensor " + QuotedText(t.name));
    tensor_index_[t.name] = tensors_.size();
    tensors_.push_back(std::move(t));
  }

  // Tensor data: after the infos, aligned; each tensor inside the file.
  uint64_t data_start = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (n_tensors > 0 && data_start > image_.size()) return fail("data section starts past the end of the file");
  uint64_t data_size = image_.size() > data_start ? image_.size() - data_start : 0;
  for (auto& t : tensors_) {
    if (t.offset % alignment_ != 0) return fail("tensor " + QuotedText(t.name) + " offset is not aligned");
    if (t.offset > data_size || t.n_bytes > data_size - t.offset)
      return fail("tensor " + QuotedText(t.name) + " data lies past the end of the file (truncated?)");
    t.data = image_.data() + data_start + t.offset;
  }
  return Status::Ok();
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<const GgufValue*> GgufFile::Require(const std::string& key) const {
  if (const GgufValue* v = Find(key)) return v;
  return NotFound(path_ + ": missing metadata '" + key + "'");
}

Status GgufFile::NotA(const std::string& key, const char* what) const {
  return InvalidArgument(path_ + ": metadata '" + key + "' is not " + what);
}

template <typename T>
Result<T> GgufFile::GetHeld(const std::string& key, const char* what) const {
  PG_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  constexpr bool kScalar = std::is_same_v<T, std::string> || std::is_same_v<T, bool>;
  if (auto* x = std::get_if<T>(&v->v); x && !(kScalar && v->is_array())) return *x;
  return NotA(key, what);
}

Result<std::string> GgufFile::GetString(const std::string& key) const { return GetHeld<std::string>(key, "a string"); }

Result<int64_t> GgufFile::GetInt(const std::string& key) const {
  PG_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (!v->is_array()) {
    if (auto* s = std::get_if<int64_t>(&v->v)) return *s;
    if (auto* u = std::get_if<uint64_t>(&v->v)) {
      if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return InvalidArgument(path_ + ": metadata '" + key + "' is out of range");
      return static_cast<int64_t>(*u);
    }
  }
  return NotA(key, "an integer");
}

Result<double> GgufFile::GetFloat(const std::string& key) const {
  PG_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (!v->is_array()) {
    if (auto* d = std::get_if<double>(&v->v)) return *d;
    if (auto* s = std::get_if<int64_t>(&v->v)) return static_cast<double>(*s);
    if (auto* u = std::get_if<uint64_t>(&v->v)) return static_cast<double>(*u);
  }
  return NotA(key, "a number");
}

Result<bool> GgufFile::GetBool(const std::string& key) const { return GetHeld<bool>(key, "a bool"); }

Result<std::vector<std::string>> GgufFile::GetStringArray(const std::string& key) const {
  return GetHeld<std::vector<std::string>>(key, "a string array");
}

Result<std::vector<double>> GgufFile::GetFloatArray(const std::string& key) const {
  PG_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (auto* a = std::get_if<std::vector<double>>(&v->v)) return *a;
  if (auto* a = std::get_if<std::vector<int64_t>>(&v->v)) return std::vector<double>(a->begin(), a->end());
  if (auto* a = std::get_if<std::vector<uint64_t>>(&v->v)) return std::vector<double>(a->begin(), a->end());
  return NotA(key, "a numeric array");
}

Result<std::vector<int64_t>> GgufFile::GetIntArray(const std::string& key) const {
  PG_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (auto* a = std::get_if<std::vector<int64_t>>(&v->v)) return *a;
  if (auto* a = std::get_if<std::vector<uint64_t>>(&v->v)) {
    std::vector<int64_t> out;
    out.reserve(a->size());
    for (uint64_t x : *a) out.push_back(static_cast<int64_t>(x));
    return out;
  }
  return NotA(key, "an integer array");
}

int64_t GgufFile::GetIntOr(const std::string& key, int64_t def) const {
  auto r = GetInt(key);
  return r.ok() ? *r : def;
}
double GgufFile::GetFloatOr(const std::string& key, double def) const {
  auto r = GetFloat(key);
  return r.ok() ? *r : def;
}
bool GgufFile::GetBoolOr(const std::string& key, bool def) const {
  auto r = GetBool(key);
  return r.ok() ? *r : def;
}
std::string GgufFile::GetStringOr(const std::string& key, const std::string& def) const {
  auto r = GetString(key);
  return r.ok() ? *r : def;
}

}  // namespace pg
