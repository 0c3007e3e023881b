#include "gguf/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/check.h"
#include "base/thread_pool.h"

namespace pg {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF"
constexpr uint32_t kVersion = 3;
constexpr uint64_t kChunkBytes = 4ull << 20;  // target size of one fill call
constexpr int kChunksPerWindow = 16;          // chunks filled in parallel, then written

class Encoder {
 public:
  explicit Encoder(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  void Put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out_->insert(out_->end(), p, p + sizeof(T));
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_->insert(out_->end(), s.begin(), s.end());
  }

 private:
  std::vector<uint8_t>* out_;
};

// Writes one scalar element of type t from its widened form.
void PutInt(Encoder& e, GgufValueType t, uint64_t bits) {
  switch (t) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8: e.Put<uint8_t>(static_cast<uint8_t>(bits)); break;
    case GgufValueType::UINT16:
    case GgufValueType::INT16: e.Put<uint16_t>(static_cast<uint16_t>(bits)); break;
    case GgufValueType::UINT32:
    case GgufValueType::INT32: e.Put<uint32_t>(static_cast<uint32_t>(bits)); break;
    default: e.Put<uint64_t>(bits); break;
  }
}
void PutFloat(Encoder& e, GgufValueType t, double v) {
  if (t == GgufValueType::FLOAT32)
    e.Put<float>(static_cast<float>(v));
  else
    e.Put<double>(v);
}

// Whether v's variant alternative matches its declared type(s).
bool ValueIsConsistent(const GgufValue& v) {
  if (v.type == GgufValueType::ARRAY) {
    const GgufValueType t = v.array_type;
    if (IsSignedType(t)) return std::holds_alternative<std::vector<int64_t>>(v.v);
    if (IsUnsignedType(t)) return std::holds_alternative<std::vector<uint64_t>>(v.v);
    if (IsFloatType(t)) return std::holds_alternative<std::vector<double>>(v.v);
    if (t == GgufValueType::BOOL) return std::holds_alternative<std::vector<bool>>(v.v);
    if (t == GgufValueType::STRING) return std::holds_alternative<std::vector<std::string>>(v.v);
    return false;  // nested arrays are not written
  }
  const GgufValueType t = v.type;
  if (IsSignedType(t)) return std::holds_alternative<int64_t>(v.v);
  if (IsUnsignedType(t)) return std::holds_alternative<uint64_t>(v.v);
  if (IsFloatType(t)) return std::holds_alternative<double>(v.v);
  if (t == GgufValueType::BOOL) return std::holds_alternative<bool>(v.v);
  if (t == GgufValueType::STRING) return std::holds_alternative<std::string>(v.v);
  return false;
}

void PutValue(Encoder& e, const GgufValue& v) {
  e.Put<uint32_t>(static_cast<uint32_t>(v.type));
  if (v.type != GgufValueType::ARRAY) {
    const GgufValueType t = v.type;
    if (IsSignedType(t))
      PutInt(e, t, static_cast<uint64_t>(std::get<int64_t>(v.v)));
    else if (IsUnsignedType(t))
      PutInt(e, t, std::get<uint64_t>(v.v));
    else if (IsFloatType(t))
      PutFloat(e, t, std::get<double>(v.v));
    else if (t == GgufValueType::BOOL)
      e.Put<uint8_t>(std::get<bool>(v.v) ? 1 : 0);
    else
      e.PutString(std::get<std::string>(v.v));
    return;
  }
  const GgufValueType t = v.array_type;
  e.Put<uint32_t>(static_cast<uint32_t>(t));
  e.Put<uint64_t>(v.array_size());
  if (IsSignedType(t)) {
    for (int64_t x : std::get<std::vector<int64_t>>(v.v)) PutInt(e, t, static_cast<uint64_t>(x));
  } else if (IsUnsignedType(t)) {
    for (uint64_t x : std::get<std::vector<uint64_t>>(v.v)) PutInt(e, t, x);
  } else if (IsFloatType(t)) {
    for (double x : std::get<std::vector<double>>(v.v)) PutFloat(e, t, x);
  } else if (t == GgufValueType::BOOL) {
    for (bool x : std::get<std::vector<bool>>(v.v)) e.Put<uint8_t>(x ? 1 : 0);
  } else {
    for (const auto& s : std::get<std::vector<std::string>>(v.v)) e.PutString(s);
  }
}

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

GgufValue Scalar(GgufValueType t, decltype(GgufValue::v) v) {
  GgufValue g;
  g.type = t;
  g.v = std::move(v);
  return g;
}
GgufValue Array(GgufValueType t, decltype(GgufValue::v) v) {
  GgufValue g;
  g.type = GgufValueType::ARRAY;
  g.array_type = t;
  g.v = std::move(v);
  return g;
}

}  // namespace

GgufWriter::GgufWriter() { SetU32("general.alignment", kAlignment); }

void GgufWriter::Set(const std::string& key, GgufValue v) {
  // The layout depends on the alignment: the constructor's value stays.
  if (key == "general.alignment" && !kvs_.empty()) return;
  for (auto& kv : kvs_) {
    if (kv.key == key) {
      kv.value = std::move(v);
      return;
    }
  }
  kvs_.push_back({key, std::move(v)});
}

void GgufWriter::SetU8(const std::string& k, uint8_t v) { Set(k, Scalar(GgufValueType::UINT8, uint64_t{v})); }
void GgufWriter::SetI8(const std::string& k, int8_t v) { Set(k, Scalar(GgufValueType::INT8, int64_t{v})); }
void GgufWriter::SetU16(const std::string& k, uint16_t v) { Set(k, Scalar(GgufValueType::UINT16, uint64_t{v})); }
void GgufWriter::SetI16(const std::string& k, int16_t v) { Set(k, Scalar(GgufValueType::INT16, int64_t{v})); }
void GgufWriter::SetU32(const std::string& k, uint32_t v) { Set(k, Scalar(GgufValueType::UINT32, uint64_t{v})); }
void GgufWriter::SetI32(const std::string& k, int32_t v) { Set(k, Scalar(GgufValueType::INT32, int64_t{v})); }
void GgufWriter::SetU64(const std::string& k, uint64_t v) { Set(k, Scalar(GgufValueType::UINT64, v)); }
void GgufWriter::SetI64(const std::string& k, int64_t v) { Set(k, Scalar(GgufValueType::INT64, v)); }
void GgufWriter::SetF32(const std::string& k, float v) { Set(k, Scalar(GgufValueType::FLOAT32, double{v})); }
void GgufWriter::SetF64(const std::string& k, double v) { Set(k, Scalar(GgufValueType::FLOAT64, v)); }
void GgufWriter::SetBool(const std::string& k, bool v) { Set(k, Scalar(GgufValueType::BOOL, v)); }
void GgufWriter::SetString(const std::string& k, const std::string& v) { Set(k, Scalar(GgufValueType::STRING, v)); }
void GgufWriter::SetStringArray(const std::string& k, const std::vector<std::string>& v) {
  Set(k, Array(GgufValueType::STRING, v));
}
void GgufWriter::SetI32Array(const std::string& k, const std::vector<int32_t>& v) {
  Set(k, Array(GgufValueType::INT32, std::vector<int64_t>(v.begin(), v.end())));
}
void GgufWriter::SetI64Array(const std::string& k, const std::vector<int64_t>& v) {
  Set(k, Array(GgufValueType::INT64, v));
}
void GgufWriter::SetU32Array(const std::string& k, const std::vector<uint32_t>& v) {
  Set(k, Array(GgufValueType::UINT32, std::vector<uint64_t>(v.begin(), v.end())));
}
void GgufWriter::SetF32Array(const std::string& k, const std::vector<float>& v) {
  Set(k, Array(GgufValueType::FLOAT32, std::vector<double>(v.begin(), v.end())));
}
void GgufWriter::SetBoolArray(const std::string& k, const std::vector<bool>& v) {
  Set(k, Array(GgufValueType::BOOL, v));
}

Status GgufWriter::SetValue(const std::string& key, const GgufValue& v) {
  if (!ValueIsConsistent(v)) return InvalidArgument("gguf writer: value of '" + key + "' does not match its type");
  Set(key, v);
  return Status::Ok();
}

bool GgufWriter::HasKey(const std::string& key) const {
  return std::any_of(kvs_.begin(), kvs_.end(), [&](const Kv& kv) { return kv.key == key; });
}

Status GgufWriter::CheckTensor(const std::string& name, GgmlType type, const std::vector<int64_t>& dims,
                               uint64_t* n_bytes) const {
  const GgmlTypeInfo* info = GgmlTypeInfoFor(static_cast<uint32_t>(type));
  if (!info) return InvalidArgument("gguf writer: tensor '" + name + "' has an unknown type");
  if (dims.empty() || dims.size() > 4) return InvalidArgument("gguf writer: tensor '" + name + "' needs 1..4 dims");
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0 || static_cast<uint64_t>(d) > (1ull << 50) / n)
      return InvalidArgument("gguf writer: tensor '" + name + "' has a bad dimension");
    n *= static_cast<uint64_t>(d);
  }
  if (dims[0] % info->block_elems != 0)
    return InvalidArgument("gguf writer: tensor '" + name + "' row is not a multiple of the " +
                           std::string(info->name) + " block size");
  for (const auto& t : tensors_)
    if (t.name == name) return InvalidArgument("gguf writer: duplicate tensor '" + name + "'");
  *n_bytes = n / info->block_elems * info->block_bytes;
  return Status::Ok();
}

Status GgufWriter::AddTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims,
                             std::vector<uint8_t> bytes) {
  uint64_t n_bytes = 0;
  PG_RETURN_IF_ERROR(CheckTensor(name, type, dims, &n_bytes));
  if (bytes.size() != n_bytes)
    return InvalidArgument("gguf writer: tensor '" + name + "' has " + std::to_string(bytes.size()) +
                           " bytes, expected " + std::to_string(n_bytes));
  Tensor t{name, type, std::move(dims), n_bytes, data_bytes_, std::move(bytes), nullptr};
  data_bytes_ = AlignUp(data_bytes_ + n_bytes, kAlignment);
  tensors_.push_back(std::move(t));
  return Status::Ok();
}

Status GgufWriter::AddTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims, FillRows fill) {
  uint64_t n_bytes = 0;
  PG_RETURN_IF_ERROR(CheckTensor(name, type, dims, &n_bytes));
  if (!fill) return InvalidArgument("gguf writer: tensor '" + name + "' has no fill function");
  Tensor t{name, type, std::move(dims), n_bytes, data_bytes_, {}, std::move(fill)};
  data_bytes_ = AlignUp(data_bytes_ + n_bytes, kAlignment);
  tensors_.push_back(std::move(t));
  return Status::Ok();
}

std::vector<uint8_t> GgufWriter::EncodeHeader() const {
  std::vector<uint8_t> out;
  Encoder e(&out);
  e.Put<uint32_t>(kMagic);
  e.Put<uint32_t>(kVersion);
  e.Put<uint64_t>(tensors_.size());
  e.Put<uint64_t>(kvs_.size());
  for (const auto& kv : kvs_) {
    e.PutString(kv.key);
    PutValue(e, kv.value);
  }
  for (const auto& t : tensors_) {
    e.PutString(t.name);
    e.Put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) e.Put<uint64_t>(static_cast<uint64_t>(d));
    e.Put<uint32_t>(static_cast<uint32_t>(t.type));
    e.Put<uint64_t>(t.offset);
  }
  out.resize(AlignUp(out.size(), kAlignment), 0);
  return out;
}

uint64_t GgufWriter::FileSize() const { return EncodeHeader().size() + data_bytes_; }

Status GgufWriter::Emit(const std::function<Status(const uint8_t*, size_t)>& sink, ThreadPool* pool) const {
  const std::vector<uint8_t> header = EncodeHeader();
  PG_RETURN_IF_ERROR(sink(header.data(), header.size()));
  static const uint8_t kZeros[kAlignment] = {};
  std::vector<uint8_t> window;
  uint64_t written = 0;  // bytes of the data section so far
  for (const auto& t : tensors_) {
    PG_CHECK(written == t.offset);
    if (t.fill == nullptr) {
      PG_RETURN_IF_ERROR(sink(t.bytes.data(), t.bytes.size()));
    } else {
      const uint64_t row_bytes = RowBytes(t.type, t.dims[0]);
      const int64_t n_rows = static_cast<int64_t>(t.n_bytes / row_bytes);
      const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / row_bytes));
      const int64_t rows_per_window = rows_per_chunk * kChunksPerWindow;
      for (int64_t w0 = 0; w0 < n_rows; w0 += rows_per_window) {
        const int64_t w_rows = std::min(rows_per_window, n_rows - w0);
        const int64_t n_chunks = (w_rows + rows_per_chunk - 1) / rows_per_chunk;
        window.resize(static_cast<size_t>(w_rows) * row_bytes);
        std::vector<Status> errors(static_cast<size_t>(n_chunks));
        auto fill_chunk = [&](int64_t c) {
          const int64_t r0 = c * rows_per_chunk;
          const int64_t nr = std::min(rows_per_chunk, w_rows - r0);
          errors[c] = t.fill(w0 + r0, nr, window.data() + static_cast<size_t>(r0) * row_bytes);
        };
        if (pool != nullptr && n_chunks > 1) {
          pool->ParallelFor(n_chunks, fill_chunk);
        } else {
          for (int64_t c = 0; c < n_chunks; ++c) fill_chunk(c);
        }
        for (const Status& s : errors) PG_RETURN_IF_ERROR(s);
        PG_RETURN_IF_ERROR(sink(window.data(), window.size()));
      }
    }
    const uint64_t padded = AlignUp(t.n_bytes, kAlignment);
    if (padded > t.n_bytes) PG_RETURN_IF_ERROR(sink(kZeros, padded - t.n_bytes));
    written += padded;
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> GgufWriter::WriteToBuffer() const {
  std::vector<uint8_t> out;
  PG_RETURN_IF_ERROR(Emit(
      [&](const uint8_t* p, size_t n) {
        out.insert(out.end(), p, p + n);
        return Status::Ok();
      },
      nullptr));
  return out;
}

Status GgufWriter::Write(const std::string& path, ThreadPool* pool) const {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return IoError(tmp + ": cannot create: " + std::strerror(errno));
  Status st = Emit(
      [&](const uint8_t* p, size_t n) -> Status {
        if (n > 0 && std::fwrite(p, 1, n, f) != n) return IoError(tmp + ": write failed: " + std::strerror(errno));
        return Status::Ok();
      },
      pool);
  if (std::fflush(f) != 0 && st.ok()) st = IoError(tmp + ": write failed: " + std::strerror(errno));
  if (st.ok() && ::fsync(fileno(f)) != 0) st = IoError(tmp + ": fsync failed: " + std::strerror(errno));
  if (std::fclose(f) != 0 && st.ok()) st = IoError(tmp + ": close failed: " + std::strerror(errno));
  if (st.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
    st = IoError(path + ": cannot rename from " + tmp + ": " + std::strerror(errno));
  if (!st.ok()) std::remove(tmp.c_str());
  return st;
}

}  // namespace pg
