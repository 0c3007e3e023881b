#include "backend/cpu/fp8_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/quant.h"
#include "backend/cpu/quant_fp.h"

namespace pg {
namespace {

constexpr int64_t kScaleBlock = 128;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char* KindName(Fp8ScaleKind k) {
  switch (k) {
    case Fp8ScaleKind::kBlock128x128: return "128x128-block";
    case Fp8ScaleKind::kPerChannel: return "per-channel";
    case Fp8ScaleKind::kPerTensor: return "per-tensor";
  }
  return "?";
}

Status CheckSource(const Fp8Source& s) {
  if (s.fp8 == nullptr || s.rows <= 0 || s.cols <= 0) return InvalidArgument("FP8 weight is empty");
  if (s.cols % kQKNV != 0)
    return InvalidArgument("FP8 weight has " + std::to_string(s.cols) + " columns, not a multiple of " +
                           std::to_string(kQKNV));
  const int64_t want = Fp8ScaleCount(s.kind, s.rows, s.cols);
  if (s.scales == nullptr || s.n_scales != want)
    return InvalidArgument(std::string("FP8 ") + KindName(s.kind) + " scale has " + std::to_string(s.n_scales) +
                           " values, expected " + std::to_string(want) + " for a " + std::to_string(s.rows) + " x " +
                           std::to_string(s.cols) + " weight");
  for (int64_t i = 0; i < s.n_scales; ++i) {
    if (!std::isfinite(s.scales[i]) || s.scales[i] < 0)
      return InvalidArgument("FP8 scale " + std::to_string(i) + " is " + std::to_string(s.scales[i]) +
                             ", not a finite non-negative number");
  }
  return Status::Ok();
}

// The scale of the 64-element block starting at (r, c).
float ScaleAt(const Fp8Source& s, int64_t r, int64_t c) {
  switch (s.kind) {
    case Fp8ScaleKind::kBlock128x128:
      return s.scales[(r / kScaleBlock) * CeilDiv(s.cols, kScaleBlock) + c / kScaleBlock];
    case Fp8ScaleKind::kPerChannel: return s.scales[r];
    case Fp8ScaleKind::kPerTensor: return s.scales[0];
  }
  return 0;
}

}  // namespace

int64_t Fp8ScaleCount(Fp8ScaleKind kind, int64_t rows, int64_t cols) {
  switch (kind) {
    case Fp8ScaleKind::kBlock128x128: return CeilDiv(rows, kScaleBlock) * CeilDiv(cols, kScaleBlock);
    case Fp8ScaleKind::kPerChannel: return rows;
    case Fp8ScaleKind::kPerTensor: return 1;
  }
  return 0;
}

size_t Fp8PackedBytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(rows) * RowBytes(GgmlType::FP8_E4M3, cols);
}

Status PackFp8E4M3(const Fp8Source& s, void* dst) {
  PG_RETURN_IF_ERROR(CheckSource(s));
  auto* out = static_cast<BlockFP8_E4M3*>(dst);
  const int64_t nb = s.cols / kQKNV;
  for (int64_t r = 0; r < s.rows; ++r) {
    const uint8_t* row = s.fp8 + r * s.cols;
    for (int64_t b = 0; b < nb; ++b) {
      BlockFP8_E4M3& blk = out[r * nb + b];
      blk.d = ScaleAt(s, r, b * kQKNV);
      std::memcpy(blk.q, row + b * kQKNV, kQKNV);
      for (int i = 0; i < kQKNV; ++i) {
        if ((blk.q[i] & 0x7F) == 0x7F)
          return InvalidArgument("FP8 weight holds a NaN byte at row " + std::to_string(r) + ", column " +
                                 std::to_string(b * kQKNV + i));
      }
    }
  }
  return Status::Ok();
}

void QuantizeFp8Block128(const float* w, int64_t rows, int64_t cols, uint8_t* fp8, float* scales) {
  const int64_t bc = CeilDiv(cols, kScaleBlock);
  for (int64_t br = 0; br < CeilDiv(rows, kScaleBlock); ++br)
    for (int64_t bj = 0; bj < bc; ++bj) {
      const int64_t r0 = br * kScaleBlock, r1 = std::min(rows, r0 + kScaleBlock);
      const int64_t c0 = bj * kScaleBlock, c1 = std::min(cols, c0 + kScaleBlock);
      float amax = 0;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
      const float scale = amax / 448.0f;
      scales[br * bc + bj] = scale;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) fp8[r * cols + c] = scale > 0 ? F32ToE4m3(w[r * cols + c] / scale) : 0;
    }
}

}  // namespace pg
