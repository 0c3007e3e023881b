#include "model/hf_fp8_tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/fp8_weights.h"
#include "hf/error_text.h"

namespace pg {
namespace {

// The scale companion of `w`: X.weight_scale_inv, else X.weight_scale.
const SafeTensor* FindScale(const HfDir& d, const std::string& weight) {
  if (const SafeTensor* s = d.Find(weight + "_scale_inv")) return s;
  return d.Find(weight + "_scale");
}

std::vector<float> ScaleValues(const SafeTensor& s) {
  std::vector<float> v(static_cast<size_t>(s.n_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (s.dtype == SafeDtype::kF32) {
      std::memcpy(&v[i], s.data + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, s.data + 2 * i, 2);
      v[i] = s.dtype == SafeDtype::kBF16 ? BF16ToF32(h) : F16ToF32(h);
    }
  }
  return v;
}

// The kind the scale's shape gives, or an error naming what was expected.
Result<Fp8ScaleKind> KindOf(const SafeTensor& s, int64_t rows, int64_t cols, const HfFp8Config& q,
                            const std::string& where) {
  const std::vector<int64_t>& sh = s.shape;
  if (q.block128) {
    const std::vector<int64_t> want = {(rows + 127) / 128, (cols + 127) / 128};
    if (sh == want) return Fp8ScaleKind::kBlock128x128;
    return InvalidArgument(where + " has shape " + ShapeText(sh) + ", config.json quantization_config." +
                           "weight_block_size [128, 128] makes " + ShapeText(want));
  }
  if (sh.empty() || sh == std::vector<int64_t>{1}) return Fp8ScaleKind::kPerTensor;
  if (sh == std::vector<int64_t>{rows} || sh == std::vector<int64_t>{rows, 1}) return Fp8ScaleKind::kPerChannel;
  return InvalidArgument(where + " has shape " + ShapeText(sh) + ", expected [] or [1] (per tensor) or [" +
                         std::to_string(rows) + "] (per channel); config.json quantization_config has no " +
                         "weight_block_size");
}

}  // namespace

Status PackHfFp8Tensor(const HfDir& d, const SafeTensor& w, const HfFp8Config& q, uint8_t* dst) {
  const std::string where = d.ShardOf(w.name) + ": tensor " + w.name;
  if (w.shape.size() != 2) return InvalidArgument(where + " is F8_E4M3 but not a matrix");
  const int64_t rows = w.shape[0], cols = w.shape[1];
  const SafeTensor* s = FindScale(d, w.name);
  if (s == nullptr)
    return NotFound(where + " is F8_E4M3 and its scale " + w.name + "_scale_inv (or " + w.name + "_scale) is missing");
  const std::string swhere = d.ShardOf(s->name) + ": tensor " + s->name;
  if (s->dtype == SafeDtype::kF8_E4M3) return InvalidArgument(swhere + " is F8_E4M3; a scale is F32, BF16 or F16");
  PG_ASSIGN_OR_RETURN(Fp8ScaleKind kind, KindOf(*s, rows, cols, q, swhere));
  const std::vector<float> scales = ScaleValues(*s);
  Fp8Source src{w.data, rows, cols, kind, scales.data(), static_cast<int64_t>(scales.size())};
  Status st = PackFp8E4M3(src, dst);
  if (!st.ok()) return InvalidArgument(where + ": " + st.message());
  return Status::Ok();
}

}  // namespace pg
