#include "gpu/kernels/fp8_device_form.h"

#include <cstring>

namespace pg::gpu {
namespace {

constexpr int64_t kBlock = 64, kBlockBytes = 68;

// The f32 scale bits of block b of row r (bits: an exact comparison).
uint32_t ScaleBits(const uint8_t* m, int64_t cols, int64_t r, int64_t b) {
  uint32_t u;
  std::memcpy(&u, m + (r * (cols / kBlock) + b) * kBlockBytes, 4);
  return u;
}

float ScaleOf(const uint8_t* m, int64_t cols, int64_t r, int64_t b) {
  float f;
  std::memcpy(&f, m + (r * (cols / kBlock) + b) * kBlockBytes, 4);
  return f;
}

bool FitsPerRow(const uint8_t* m, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 1; b < cols / kBlock; ++b)
      if (ScaleBits(m, cols, r, b) != ScaleBits(m, cols, r, 0)) return false;
  return true;
}

bool FitsBlock128(const uint8_t* m, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < cols / kBlock; ++b)
      if (ScaleBits(m, cols, r, b) != ScaleBits(m, cols, r / 128 * 128, b / 2 * 2)) return false;
  return true;
}

}  // namespace

Fp8Layout ChooseFp8Layout(const uint8_t* blocks, int64_t rows, int64_t cols, int64_t n_mats, size_t mat_bytes) {
  bool per_row = true, block128 = true;
  for (int64_t e = 0; e < n_mats; ++e) {
    const uint8_t* m = blocks + static_cast<size_t>(e) * mat_bytes;
    per_row = per_row && FitsPerRow(m, rows, cols);
    block128 = block128 && FitsBlock128(m, rows, cols);
  }
  return per_row ? Fp8Layout::kPerRow : block128 ? Fp8Layout::kBlock128 : Fp8Layout::kBlock64;
}

Fp8ScaleShape ScaleShapeOf(Fp8Layout layout, int64_t rows, int64_t cols) {
  switch (layout) {
    case Fp8Layout::kPerRow: return {1, rows};
    case Fp8Layout::kBlock128: {
      const int64_t ld = ((cols + 127) / 128 + 3) / 4 * 4;
      return {ld, (rows + 127) / 128 * ld};
    }
    case Fp8Layout::kBlock64: return {cols / kBlock, rows * (cols / kBlock)};
  }
  return {};
}

void ToFp8DeviceForm(const uint8_t* blocks, int64_t rows, int64_t cols, Fp8Layout layout, uint8_t* bytes,
                     float* scales) {
  const int64_t nb = cols / kBlock;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b)
      std::memcpy(bytes + r * cols + b * kBlock, blocks + (r * nb + b) * kBlockBytes + 4, kBlock);
  const Fp8ScaleShape sh = ScaleShapeOf(layout, rows, cols);
  switch (layout) {
    case Fp8Layout::kPerRow:
      for (int64_t r = 0; r < rows; ++r) scales[r] = ScaleOf(blocks, cols, r, 0);
      break;
    case Fp8Layout::kBlock128:
      std::memset(scales, 0, static_cast<size_t>(sh.per_mat) * sizeof(float));
      for (int64_t rb = 0; rb < (rows + 127) / 128; ++rb)
        for (int64_t cb = 0; cb < (cols + 127) / 128; ++cb)
          scales[rb * sh.ld + cb] = ScaleOf(blocks, cols, rb * 128, cb * 2);
      break;
    case Fp8Layout::kBlock64:
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < nb; ++b) scales[r * nb + b] = ScaleOf(blocks, cols, r, b);
      break;
  }
}

}  // namespace pg::gpu
