#include "gguf/gguf_corpus.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/check.h"
#include "gguf/gguf_writer.h"

namespace pg {
namespace {

// Offsets of the fixed header fields (see gguf_writer.h).
constexpr size_t kVersionOff = 4;
constexpr size_t kNTensorsOff = 8;
constexpr size_t kNKvOff = 16;
constexpr size_t kFirstKvOff = 24;

std::vector<uint8_t> Bytes(const GgufWriter& w) {
  auto r = w.WriteToBuffer();
  PG_CHECK(r.ok());
  return std::move(r).value();
}

// Offset of the encoded string s (its u64 length field) in the image.
size_t FindEncoded(const std::vector<uint8_t>& b, const std::string& s) {
  const uint64_t n = s.size();
  std::vector<uint8_t> pat(reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 8);
  pat.insert(pat.end(), s.begin(), s.end());
  auto it = std::search(b.begin(), b.end(), pat.begin(), pat.end());
  PG_CHECK_MSG(it != b.end(), s.c_str());
  return static_cast<size_t>(it - b.begin());
}
// Offset just past the encoded string s: where a key's value type or a
// tensor's n_dims lies.
size_t After(const std::vector<uint8_t>& b, const std::string& s) { return FindEncoded(b, s) + 8 + s.size(); }

template <typename T>
std::vector<uint8_t> Patched(std::vector<uint8_t> b, size_t off, T v) {
  PG_CHECK(off + sizeof(T) <= b.size());
  std::memcpy(b.data() + off, &v, sizeof(T));
  return b;
}

// Tensor info field offsets for a tensor with 2 dims:
//   name | u32 n_dims | u64 ne0 | u64 ne1 | u32 type | u64 offset
struct TensorFields {
  size_t n_dims, ne0, ne1, type, offset;
};
TensorFields FieldsOf2D(const std::vector<uint8_t>& b, const std::string& name) {
  const size_t p = After(b, name);
  return {p, p + 4, p + 12, p + 20, p + 24};
}

const char* kEmbd = "token_embd.weight";
const char* kQ = "blk.0.attn_q.weight";

}  // namespace

std::vector<uint8_t> MakeValidGgufSample() {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetString("general.name", "corpus-sample");
  w.SetU32("llama.block_count", 1);
  w.SetF32("llama.rope.freq_base", 10000.0f);
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b", "<s>"});
  w.SetI32Array("tokenizer.ggml.token_type", {1, 1, 3});
  w.SetF32Array("tokenizer.ggml.scores", {0.0f, -1.0f, 0.0f});
  w.SetU32("sample.key_a", 1);
  w.SetU32("sample.key_b", 2);
  w.SetBool("sample.flag", true);
  std::vector<uint8_t> embd(8 * 4 * 4);
  for (size_t i = 0; i < embd.size() / 4; ++i) {
    const float f = static_cast<float>(i) * 0.125f - 1.0f;
    std::memcpy(embd.data() + 4 * i, &f, 4);
  }
  PG_CHECK(w.AddTensor(kEmbd, GgmlType::F32, {8, 4}, embd).ok());
  std::vector<uint8_t> q(2 * 34);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(i * 7);
  q[0] = 0x00, q[1] = 0x3c;    // d = 1.0 (f16)
  q[34] = 0x00, q[35] = 0x38;  // d = 0.5
  PG_CHECK(w.AddTensor(kQ, GgmlType::Q8_0, {32, 2}, q).ok());
  return Bytes(w);
}

size_t ValidSampleDataEnd() {
  // The last tensor (kQ) is followed only by zero padding to the alignment.
  const std::vector<uint8_t> good = MakeValidGgufSample();
  auto f = GgufFile::FromBuffer(good.data(), good.size());
  PG_CHECK(f.ok());
  const uint64_t n = (*f)->FindTensor(kQ)->n_bytes;
  const uint64_t a = GgufWriter::kAlignment;
  return good.size() - static_cast<size_t>((n + a - 1) / a * a - n);
}

std::vector<GgufCorpusCase> MakeValidGgufSamples() {
  std::vector<GgufCorpusCase> out;
  out.push_back({"sample", MakeValidGgufSample(), ""});
  {
    GgufWriter w;
    w.SetString("general.architecture", "qwen2");
    w.SetStringArray("tokenizer.ggml.merges", {"a b", "ab c"});
    out.push_back({"metadata_only", Bytes(w), ""});
  }
  {
    GgufWriter w;
    w.SetString("general.architecture", "qwen3");
    PG_CHECK(w.AddTensor("k4", GgmlType::Q4_K, {256, 1}, std::vector<uint8_t>(144, 0x11)).ok());
    PG_CHECK(w.AddTensor("k6", GgmlType::Q6_K, {256}, std::vector<uint8_t>(210, 0x22)).ok());
    PG_CHECK(w.AddTensor("h", GgmlType::F16, {4, 2, 2}, std::vector<uint8_t>(32, 0x3c)).ok());
    PG_CHECK(w.AddTensor("bf", GgmlType::BF16, {2, 1, 1, 3}, std::vector<uint8_t>(12, 0x3f)).ok());
    PG_CHECK(w.AddTensor("q40", GgmlType::Q4_0, {32}, std::vector<uint8_t>(18, 0x77)).ok());
    PG_CHECK(w.AddTensor("q5k", GgmlType::Q5_K, {256}, std::vector<uint8_t>(176, 0x5a)).ok());
    out.push_back({"quant_types", Bytes(w), ""});
  }
  return out;
}

namespace {

// Appends one case to the list it was made with.
struct CaseSink {
  std::vector<GgufCorpusCase>& cases;
  void operator()(std::string name, std::vector<uint8_t> b, std::string expect) const {
    cases.push_back({std::move(name), std::move(b), std::move(expect)});
  }
};

void AddTruncations(const std::vector<uint8_t>& good, const CaseSink& add) {
  // Truncations: inside the fixed header, the metadata, the tensor infos and the data.
  // (Cutting only the zero padding after the last tensor leaves a valid file.)
  const size_t tinfo = FindEncoded(good, kEmbd);
  const size_t data_end = ValidSampleDataEnd();
  for (size_t n : {size_t{0}, size_t{3}, size_t{7}, size_t{20}, size_t{30}, size_t{100}, tinfo + 5, tinfo + 30,
                   data_end - 70, data_end - 1}) {
    add("truncated_" + std::to_string(n), std::vector<uint8_t>(good.begin(), good.begin() + n), "");
  }
  add("empty", {}, "");
}

// The fixed header: magic, version and absurd counts.
void AddHeaderCases(const std::vector<uint8_t>& good, const CaseSink& add) {
  {
    auto b = good;
    b[0] = 'X';
    add("bad_magic", b, "magic");
  }
  add("bad_version_1", Patched<uint32_t>(good, kVersionOff, 1), "version");
  add("bad_version_4", Patched<uint32_t>(good, kVersionOff, 4), "version");
  add("bad_version_max", Patched<uint32_t>(good, kVersionOff, 0xFFFFFFFFu), "version");

  // Absurd counts.
  add("n_kv_huge", Patched<uint64_t>(good, kNKvOff, ~uint64_t{0}), "metadata count");
  add("n_kv_2p62", Patched<uint64_t>(good, kNKvOff, uint64_t{1} << 62), "metadata count");
  add("n_tensors_huge", Patched<uint64_t>(good, kNTensorsOff, ~uint64_t{0}), "tensor count");
  add("n_tensors_plus_one", Patched<uint64_t>(good, kNTensorsOff, 3), "");
  add("n_kv_plus_one", Patched<uint64_t>(good, kNKvOff, 12), "");
  add("key_length_huge", Patched<uint64_t>(good, kFirstKvOff, ~uint64_t{0} - 15), "");
  add("key_length_2p63", Patched<uint64_t>(good, kFirstKvOff, uint64_t{1} << 63), "");
}

// Metadata values: arrays, strings, value types, duplicate keys, alignment.
void AddMetadataCases(const std::vector<uint8_t>& good, const CaseSink& add) {
  {
    // tokenizer.ggml.tokens: u32 type=ARRAY | u32 elem type | u64 count | strings
    const size_t p = After(good, "tokenizer.ggml.tokens");
    add("array_count_huge", Patched<uint64_t>(good, p + 8, ~uint64_t{0}), "array count");
    add("array_count_2p60", Patched<uint64_t>(good, p + 8, uint64_t{1} << 60), "array count");
    add("array_string_length_huge", Patched<uint64_t>(good, p + 16, ~uint64_t{0} - 7), "");
    add("array_elem_type_unknown", Patched<uint32_t>(good, p + 4, 77), "unknown array element type");
    add("array_nested", Patched<uint32_t>(good, p + 4, 9), "nested");
    const size_t q = After(good, "tokenizer.ggml.scores");
    add("f32_array_count_huge", Patched<uint64_t>(good, q + 8, uint64_t{1} << 61), "array count");
  }
  {
    const size_t p = After(good, "general.name");
    add("string_value_length_huge", Patched<uint64_t>(good, p + 4, ~uint64_t{0}), "");
    add("value_type_unknown", Patched<uint32_t>(good, p, 13), "unknown value type");
    add("value_type_max", Patched<uint32_t>(good, p, 0xFFFFFFFFu), "unknown value type");
  }
  {
    // Rename sample.key_b to sample.key_a (same length).
    auto b = good;
    const size_t p = FindEncoded(b, "sample.key_b");
    b[p + 8 + 11] = 'a';
    add("duplicate_key", b, "duplicate metadata key");
    // A key with a newline in it, duplicated: the error must stay one line.
    auto n = good;
    const size_t pa = FindEncoded(n, "sample.key_a");
    const size_t pb = FindEncoded(n, "sample.key_b");
    n[pa + 8 + 6] = '\n';
    n[pb + 8 + 6] = '\n';
    n[pb + 8 + 11] = 'a';
    add("duplicate_key_with_newline", n, "duplicate metadata key");
  }
  {
    const size_t p = After(good, "general.alignment");
    add("alignment_zero", Patched<uint32_t>(good, p + 4, 0), "alignment");
    add("alignment_not_pow2", Patched<uint32_t>(good, p + 4, 48), "alignment");
    add("alignment_huge", Patched<uint32_t>(good, p + 4, 1u << 31), "alignment");
  }
}

// Tensor descriptors of the sample: dims, types and offsets.
void AddTensorInfoCases(const std::vector<uint8_t>& good, const CaseSink& add) {
  // Tensor descriptors.
  const TensorFields e = FieldsOf2D(good, kEmbd);
  const TensorFields q = FieldsOf2D(good, kQ);
  add("n_dims_zero", Patched<uint32_t>(good, e.n_dims, 0), "dims");
  add("n_dims_five", Patched<uint32_t>(good, e.n_dims, 5), "dims");
  add("n_dims_huge", Patched<uint32_t>(good, e.n_dims, 0xFFFFFFFFu), "dims");
  add("dim_zero", Patched<uint64_t>(good, e.ne1, 0), "dimension");
  add("dim_huge", Patched<uint64_t>(good, e.ne0, ~uint64_t{0}), "dimension");
  add("dim_2p63", Patched<uint64_t>(good, e.ne1, uint64_t{1} << 63), "dimension");
  // ne0 * ne1 = 2^64: overflows int64 when multiplied.
  add("dims_product_overflow",
      Patched<uint64_t>(Patched<uint64_t>(good, e.ne0, uint64_t{1} << 32), e.ne1, uint64_t{1} << 32), "dimension");
  // 2^24 x 2^24 F32 = 2^50 elements, 4 PiB of data: fits int64, not the file.
  add("dims_size_past_eof",
      Patched<uint64_t>(Patched<uint64_t>(good, e.ne0, uint64_t{1} << 24), e.ne1, uint64_t{1} << 24), "past the end");
  add("q8_row_not_block_multiple", Patched<uint64_t>(good, q.ne0, 31), "block size");
  add("tensor_type_unknown", Patched<uint32_t>(good, e.type, 99), "unknown type");
  add("tensor_type_removed_q4_2", Patched<uint32_t>(good, e.type, 4), "unknown type");
  add("tensor_type_max", Patched<uint32_t>(good, e.type, 0xFFFFFFFFu), "unknown type");
  add("tensor_offset_past_eof", Patched<uint64_t>(good, q.offset, uint64_t{1} << 40), "past the end");
  add("tensor_offset_wraps", Patched<uint64_t>(good, q.offset, ~uint64_t{0} - 31), "past the end");
  add("tensor_offset_misaligned", Patched<uint64_t>(good, q.offset, 129), "aligned");
}

// Files of their own: a duplicate tensor name, no data section.
void AddTensorTableCases(const CaseSink& add) {
  {
    // Two tensors whose names differ in the last byte, then patched equal.
    GgufWriter w;
    PG_CHECK(w.AddTensor("t.a", GgmlType::F32, {4}, std::vector<uint8_t>(16, 1)).ok());
    PG_CHECK(w.AddTensor("t.b", GgmlType::F32, {4}, std::vector<uint8_t>(16, 2)).ok());
    auto d = Bytes(w);
    d[After(d, "t.b") - 1] = 'a';
    add("duplicate_tensor", d, "duplicate tensor");
  }
  {
    // The file ends before the data section begins.
    GgufWriter w;
    PG_CHECK(w.AddTensor("t", GgmlType::F32, {4}, std::vector<uint8_t>(16, 1)).ok());
    auto d = Bytes(w);
    d.resize(After(d, "t") + 4 + 8 + 4 + 8);  // exactly the header, no padding
    add("no_data_section", d, "");
  }
}

// Writes each case to dir/<prefix><name>.gguf, creating dir.
Status WriteCases(const std::string& dir, const char* prefix, const std::vector<GgufCorpusCase>& cases) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create directory: " + ec.message());
  for (const auto& k : cases) {
    const std::string path = dir + "/" + prefix + k.name + ".gguf";
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(k.bytes.data()), static_cast<std::streamsize>(k.bytes.size()));
    if (!f) return IoError(path + ": write failed");
  }
  return Status::Ok();
}

}  // namespace

std::vector<GgufCorpusCase> MakeCorruptGgufCases() {
  const std::vector<uint8_t> good = MakeValidGgufSample();
  std::vector<GgufCorpusCase> c;
  const CaseSink add{c};
  AddTruncations(good, add);
  AddHeaderCases(good, add);
  AddMetadataCases(good, add);
  AddTensorInfoCases(good, add);
  AddTensorTableCases(add);
  return c;
}

Status WriteCorruptCorpus(const std::string& dir) { return WriteCases(dir, "", MakeCorruptGgufCases()); }

Status WriteValidCorpus(const std::string& dir) { return WriteCases(dir, "valid_", MakeValidGgufSamples()); }

}  // namespace pg
