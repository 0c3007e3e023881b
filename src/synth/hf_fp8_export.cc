#include "synth/hf_fp8_export.h"

#include <cstring>
#include <map>

#include "backend/cpu/fp8_weights.h"
#include "backend/cpu/quant.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"

namespace pg {

bool HfExportsAsFp8(const HfTensorName& n) { return n.at_model_dtype && n.gguf.rfind("blk.", 0) == 0; }

Result<Fp8Part> QuantizeHfPart(const GgufTensorInfo& t, const HfTensorName& n, size_t e) {
  const int64_t rows = n.shape[0], cols = n.shape[1];
  const uint64_t part = t.n_bytes / n.hf.size();
  std::vector<float> w(static_cast<size_t>(rows * cols)), hf(w.size());
  PG_RETURN_IF_ERROR(DequantizeRow(t.type, t.data + e * part, w.data(), rows * cols));
  if (n.rope_heads > 0) {
    HfRopeRows(reinterpret_cast<const uint8_t*>(w.data()), reinterpret_cast<uint8_t*>(hf.data()), n.rope_heads,
               rows / n.rope_heads, static_cast<size_t>(cols) * 4, /*to_gguf=*/false);
    w.swap(hf);
  }
  Fp8Part out;
  out.fp8.resize(w.size());
  out.scales.resize(static_cast<size_t>(Fp8ScaleCount(Fp8ScaleKind::kBlock128x128, rows, cols)));
  QuantizeFp8Block128(w.data(), rows, cols, out.fp8.data(), out.scales.data());
  return out;
}

namespace {

// The F32 bytes (GGUF row order) an FP8 export of t loads to, every part.
Result<std::vector<uint8_t>> DequantizedBytes(const GgufTensorInfo& t, const HfTensorName& n) {
  const int64_t rows = n.shape[0], cols = n.shape[1];
  const size_t part_bytes = static_cast<size_t>(rows * cols) * 4;
  std::vector<uint8_t> out(part_bytes * n.hf.size()), packed(Fp8PackedBytes(rows, cols));
  std::vector<uint8_t> hf(part_bytes);
  for (size_t e = 0; e < n.hf.size(); ++e) {
    PG_ASSIGN_OR_RETURN(Fp8Part p, QuantizeHfPart(t, n, e));
    const Fp8Source src{
        p.fp8.data(), rows, cols, Fp8ScaleKind::kBlock128x128, p.scales.data(), static_cast<int64_t>(p.scales.size())};
    PG_RETURN_IF_ERROR(PackFp8E4M3(src, packed.data()));
    uint8_t* dst = out.data() + e * part_bytes;
    float* f = reinterpret_cast<float*>(n.rope_heads > 0 ? hf.data() : dst);
    PG_RETURN_IF_ERROR(DequantizeRow(GgmlType::FP8_E4M3, packed.data(), f, rows * cols));
    if (n.rope_heads > 0)
      HfRopeRows(hf.data(), dst, n.rope_heads, rows / n.rope_heads, static_cast<size_t>(cols) * 4, /*to_gguf=*/true);
  }
  return out;
}

}  // namespace

Status WriteFp8DequantizedGguf(const GgufFile& f, const std::string& path) {
  PG_ASSIGN_OR_RETURN(ModelConfig c, ModelConfig::FromGguf(f));
  std::map<std::string, HfTensorName> fp8;
  for (HfTensorName& n : HfTensorNames(c))
    if (HfExportsAsFp8(n)) fp8.emplace(n.gguf, std::move(n));
  GgufWriter w;
  for (const auto& [key, value] : f.metadata()) PG_RETURN_IF_ERROR(w.SetValue(key, value));
  for (const GgufTensorInfo& t : f.tensors()) {
    auto it = fp8.find(t.name);
    if (it == fp8.end()) {
      PG_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes)));
      continue;
    }
    PG_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, DequantizedBytes(t, it->second));
    PG_RETURN_IF_ERROR(w.AddTensor(t.name, GgmlType::F32, t.dims, std::move(bytes)));
  }
  return w.Write(path);
}

}  // namespace pg
