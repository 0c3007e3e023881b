#include "backend/cpu/repack.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/quant_levels.h"
#include "base/check.h"
#include "base/large_alloc.h"

namespace pg {
namespace {

// The 8-row layouts: Q8_0x8, Q5_0x8, Q4_Kx8, Q5_Kx8 and Q6_Kx8.
constexpr int kGroupRows = 8;
static_assert(kQ8_0x8Rows == kGroupRows && kQ5_0x8Rows == kGroupRows && kQ4_Kx8Rows == kGroupRows);

// A row-major matrix of `type` whose rows are whole blocks of block_cols.
bool IsRowMajorOf(const WeightMatrix& w, GgmlType type, int64_t block_cols) {
  return w.type == type && w.layout == WeightLayout::kRowMajor && w.data != nullptr && w.rows > 0 && w.cols > 0 &&
         w.cols % block_cols == 0 && w.row_bytes >= RowBytes(type, w.cols);
}

// Bytes of w in groups of 8 rows, one Out per group and column block.
template <typename Out>
size_t GroupsOf8Bytes(const WeightMatrix& w, int64_t block_cols) {
  const int64_t groups = (w.rows + kGroupRows - 1) / kGroupRows;
  return static_cast<size_t>(groups * (w.cols / block_cols)) * sizeof(Out);
}

// Fills dst with w's groups of 8 rows, one zeroed Out per group and column
// block: put(src, r, o) writes block b of row g * 8 + r (src, of type In)
// into lane r of o; padding rows past w.rows stay zero. Returns the view of
// dst in `layout`.
template <typename In, typename Out, typename Put>
WeightMatrix FillGroupsOf8(const WeightMatrix& w, void* dst, int64_t block_cols, WeightLayout layout, Put put) {
  const int64_t nb = w.cols / block_cols;
  const int64_t groups = (w.rows + kGroupRows - 1) / kGroupRows;
  auto* out = static_cast<Out*>(dst);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t b = 0; b < nb; ++b) {
      Out& o = out[g * nb + b];
      std::memset(&o, 0, sizeof o);
      for (int r = 0; r < kGroupRows; ++r) {
        const int64_t row = g * kGroupRows + r;
        if (row >= w.rows) break;
        put(reinterpret_cast<const In*>(base + row * w.row_bytes)[b], r, o);
      }
    }
  }
  WeightMatrix v = w;
  v.data = dst;
  v.layout = layout;
  return v;
}

// Row r of a group, from its row-major block.
void PutRowQ5_0x8(const BlockQ5_0& src, int r, BlockQ5_0x8& o) {
  o.d[r] = src.d;
  const uint32_t qh = LoadQh(src.qh);
  for (int k = 0; k < kQK / 8; ++k) {
    std::memcpy(&o.qs[32 * k + 4 * r], &src.qs[4 * k], 4);
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 4; ++i)
        if (((qh >> (16 * h + 4 * k + i)) & 1u) == 0) o.low16[k][h] |= 1u << (4 * r + i);
  }
}

// Q4_Kx8's fields from a Q4_K or Q5_K block (the same scales and nibbles).
template <typename In, typename Out>
void PutScalesAndNibblesK4(const In& src, int r, Out& o) {
  o.d[r] = src.d;
  o.dmin[r] = src.dmin;
  for (int j = 0; j < 8; ++j) GetScaleMinK4(j, src.scales, &o.sc[j][r], &o.m[j / 2][r][j % 2]);
  for (int p = 0; p < 4; ++p)
    for (int k = 0; k < 8; ++k) std::memcpy(&o.qs[256 * p + 32 * k + 4 * r], &src.qs[32 * p + 4 * k], 4);
}

void PutRowQ5_Kx8(const BlockQ5_K& src, int r, BlockQ5_Kx8& o) {
  PutScalesAndNibblesK4(src, r, o);
  for (int k = 0; k < 8; ++k) std::memcpy(&o.qh[32 * k + 4 * r], &src.qh[4 * k], 4);
}

void PutRowQ6_Kx8(const BlockQ6_K& src, int r, BlockQ6_Kx8& o) {
  o.d[r] = src.d;
  for (int j = 0; j < 16; ++j) o.sc[j][r] = src.scales[j];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 8; ++k) {
      for (int c = 0; c < 2; ++c)
        std::memcpy(&o.ql[512 * h + 256 * c + 32 * k + 4 * r], &src.ql[64 * h + 32 * c + 4 * k], 4);
      std::memcpy(&o.qh[256 * h + 32 * k + 4 * r], &src.qh[32 * h + 4 * k], 4);
    }
}

}  // namespace

bool CanRepackQ8_0x8(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::Q8_0, kQK); }

size_t RepackedBytesQ8_0x8(const WeightMatrix& w) { return GroupsOf8Bytes<BlockQ8_0x8>(w, kQK); }

namespace {

// Fills Q8_0x8 groups from `as_q8_0(src)`, which returns a block In of the
// source as a Q8_0 block.
template <typename In, typename AsQ8_0>
WeightMatrix FillQ8_0x8(const WeightMatrix& w, void* dst, AsQ8_0 as_q8_0) {
  auto put = [&](const In& in, int r, BlockQ8_0x8& o) {
    const BlockQ8_0 src = as_q8_0(in);
    o.d[r] = src.d;
    for (int k = 0; k < kQK / 4; ++k) std::memcpy(&o.qs[kQK * k + 4 * r], &src.qs[4 * k], 4);
  };
  WeightMatrix v = FillGroupsOf8<In, BlockQ8_0x8>(w, dst, kQK, WeightLayout::kQ8_0x8, put);
  v.type = GgmlType::Q8_0;
  v.row_bytes = std::max(w.row_bytes, RowBytes(GgmlType::Q8_0, w.cols));
  return v;
}

}  // namespace

WeightMatrix RepackQ8_0x8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ8_0x8(w));
  return FillQ8_0x8<BlockQ8_0>(w, dst, [](const BlockQ8_0& src) { return src; });
}

bool CanRepackQ5_0AsQ8_0x8(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::Q5_0, kQK); }

WeightMatrix RepackQ5_0AsQ8_0x8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ5_0AsQ8_0x8(w));
  return FillQ8_0x8<BlockQ5_0>(w, dst, [](const BlockQ5_0& src) {
    BlockQ8_0 q;
    q.d = src.d;
    const uint32_t qh = LoadQh(src.qh);
    for (int i = 0; i < kQK; ++i) q.qs[i] = static_cast<int8_t>(Q5LevelAt(src.qs, qh, i) - 16);
    return q;
  });
}

bool CanRepackQ5_0x8(const WeightMatrix& w) { return CanRepackQ5_0AsQ8_0x8(w); }

size_t RepackedBytesQ5_0x8(const WeightMatrix& w) { return GroupsOf8Bytes<BlockQ5_0x8>(w, kQK); }

WeightMatrix RepackQ5_0x8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ5_0x8(w));
  // A padding row: nibbles 0 and no mask bit, i.e. levels 0 (and scale 0).
  return FillGroupsOf8<BlockQ5_0, BlockQ5_0x8>(w, dst, kQK, WeightLayout::kQ5_0x8, PutRowQ5_0x8);
}

bool CanRepackQ4_Kx8(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::Q4_K, kQKK); }

size_t RepackedBytesQ4_Kx8(const WeightMatrix& w) { return GroupsOf8Bytes<BlockQ4_Kx8>(w, kQKK); }

WeightMatrix RepackQ4_Kx8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ4_Kx8(w));
  return FillGroupsOf8<BlockQ4_K, BlockQ4_Kx8>(w, dst, kQKK, WeightLayout::kQ4_Kx8,
                                               PutScalesAndNibblesK4<BlockQ4_K, BlockQ4_Kx8>);
}

bool CanRepackQ5_Kx8(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::Q5_K, kQKK); }

size_t RepackedBytesQ5_Kx8(const WeightMatrix& w) { return GroupsOf8Bytes<BlockQ5_Kx8>(w, kQKK); }

WeightMatrix RepackQ5_Kx8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ5_Kx8(w));
  return FillGroupsOf8<BlockQ5_K, BlockQ5_Kx8>(w, dst, kQKK, WeightLayout::kQ5_Kx8, PutRowQ5_Kx8);
}

void UnpackRowQ5_Kx8(const WeightMatrix& v, int64_t row, BlockQ5_K* out) {
  PG_CHECK(v.layout == WeightLayout::kQ5_Kx8 && row >= 0 && row < (v.rows + 7) / 8 * 8);
  const int64_t nb = v.cols / kQKK;
  const BlockQ5_Kx8* g = static_cast<const BlockQ5_Kx8*>(v.data) + (row / kGroupRows) * nb;
  const int r = static_cast<int>(row % kGroupRows);
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ5_Kx8& blk = g[b];
    BlockQ5_K& o = out[b];
    o.d = blk.d[r];
    o.dmin = blk.dmin[r];
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = blk.sc[j][r];
      m[j] = blk.m[j / 2][r][j % 2];
    }
    PackScaleMinK4(sc, m, o.scales);
    for (int k = 0; k < 8; ++k) {
      std::memcpy(&o.qh[4 * k], &blk.qh[32 * k + 4 * r], 4);
      for (int p = 0; p < 4; ++p) std::memcpy(&o.qs[32 * p + 4 * k], &blk.qs[256 * p + 32 * k + 4 * r], 4);
    }
  }
}

bool CanRepackQ6_Kx8(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::Q6_K, kQKK); }

size_t RepackedBytesQ6_Kx8(const WeightMatrix& w) { return GroupsOf8Bytes<BlockQ6_Kx8>(w, kQKK); }

WeightMatrix RepackQ6_Kx8(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackQ6_Kx8(w));
  return FillGroupsOf8<BlockQ6_K, BlockQ6_Kx8>(w, dst, kQKK, WeightLayout::kQ6_Kx8, PutRowQ6_Kx8);
}

bool CanRepackHalf4(const WeightMatrix& w) {
  return (w.type == GgmlType::F16 || w.type == GgmlType::BF16) && w.layout == WeightLayout::kRowMajor &&
         w.data != nullptr && w.rows > 0 && w.cols > 0 && w.cols % kHalf4Cols == 0 &&
         w.row_bytes >= RowBytes(w.type, w.cols);
}

size_t RepackedBytesHalf4(const WeightMatrix& w) {
  const int64_t groups = (w.rows + kHalf4Rows - 1) / kHalf4Rows;
  return static_cast<size_t>(groups * kHalf4Rows * w.cols) * sizeof(uint16_t);
}

WeightMatrix RepackHalf4(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackHalf4(w));
  const int64_t groups = (w.rows + kHalf4Rows - 1) / kHalf4Rows;
  auto* out = static_cast<uint16_t*>(dst);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < groups; ++g) {
    uint16_t* og = out + g * kHalf4Rows * w.cols;
    for (int r = 0; r < kHalf4Rows; ++r) {
      const int64_t row = g * kHalf4Rows + r;
      for (int64_t c = 0; c < w.cols; c += kHalf4Cols) {
        uint16_t* o = og + kHalf4Rows * c + kHalf4Cols * r;
        if (row < w.rows) {
          std::memcpy(o, base + row * w.row_bytes + c * sizeof(uint16_t), kHalf4Cols * sizeof(uint16_t));
        } else {
          std::memset(o, 0, kHalf4Cols * sizeof(uint16_t));
        }
      }
    }
  }
  WeightMatrix v = w;
  v.data = dst;
  v.layout = WeightLayout::kHalf4;
  return v;
}

bool CanRepackFP8x4(const WeightMatrix& w) { return IsRowMajorOf(w, GgmlType::FP8_E4M3, kQKNV); }

size_t RepackedBytesFP8x4(const WeightMatrix& w) {
  const int64_t groups = (w.rows + kFP8x4Rows - 1) / kFP8x4Rows;
  return static_cast<size_t>(groups * (w.cols / kQKNV)) * sizeof(BlockFP8x4);
}

WeightMatrix RepackFP8x4(const WeightMatrix& w, void* dst) {
  PG_CHECK(CanRepackFP8x4(w));
  const int64_t groups = (w.rows + kFP8x4Rows - 1) / kFP8x4Rows, nb = w.cols / kQKNV;
  auto* out = static_cast<BlockFP8x4*>(dst);
  std::memset(out, 0, RepackedBytesFP8x4(w));  // padding rows: zero scales and bytes
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < groups; ++g) {
    for (int r = 0; r < kFP8x4Rows && g * kFP8x4Rows + r < w.rows; ++r) {
      const auto* row = reinterpret_cast<const BlockFP8_E4M3*>(base + (g * kFP8x4Rows + r) * w.row_bytes);
      for (int64_t b = 0; b < nb; ++b) {
        out[g * nb + b].d[r] = row[b].d;
        std::memcpy(out[g * nb + b].q[r], row[b].q, kQKNV);
      }
    }
  }
  WeightMatrix v = w;
  v.data = dst;
  v.layout = WeightLayout::kFP8x4;
  return v;
}

size_t GroupOffset(const WeightMatrix& v, int64_t row) {
  WeightMatrix head = v;
  head.rows = row;
  switch (v.layout) {
    case WeightLayout::kRowMajor: return static_cast<size_t>(row) * v.row_bytes;
    case WeightLayout::kQ8_0x8: PG_CHECK(row % kQ8_0x8Rows == 0); return RepackedBytesQ8_0x8(head);
    case WeightLayout::kQ5_0x8: PG_CHECK(row % kQ5_0x8Rows == 0); return RepackedBytesQ5_0x8(head);
    case WeightLayout::kQ4_Kx8: PG_CHECK(row % kQ4_Kx8Rows == 0); return RepackedBytesQ4_Kx8(head);
    case WeightLayout::kQ6_Kx8: PG_CHECK(row % kQ4_Kx8Rows == 0); return RepackedBytesQ6_Kx8(head);
    case WeightLayout::kQ5_Kx8: PG_CHECK(row % kQ4_Kx8Rows == 0); return RepackedBytesQ5_Kx8(head);
    case WeightLayout::kHalf4: PG_CHECK(row % kHalf4Rows == 0); return RepackedBytesHalf4(head);
    case WeightLayout::kFP8x4: PG_CHECK(row % kFP8x4Rows == 0); return RepackedBytesFP8x4(head);
  }
  return 0;
}

namespace {

enum class RepackKind { kNone, kQ8_0x8, kQ5_0x8, kQ5_0AsQ8_0x8, kQ4_Kx8, kQ5_Kx8, kQ6_Kx8, kHalf4, kFP8x4 };

RepackKind KindFor(const WeightMatrix& w, const CpuKernels& k) {
  if (CanRepackQ8_0x8(w)) return RepackKind::kQ8_0x8;
  if (CanRepackQ5_0x8(w) && k.q5_0x8) return RepackKind::kQ5_0x8;
  if (CanRepackQ5_0AsQ8_0x8(w)) return RepackKind::kQ5_0AsQ8_0x8;
  if (CanRepackQ4_Kx8(w) && k.k_quant_x8) return RepackKind::kQ4_Kx8;
  if (CanRepackQ5_Kx8(w) && k.k_quant_x8) return RepackKind::kQ5_Kx8;
  if (CanRepackQ6_Kx8(w) && k.k_quant_x8) return RepackKind::kQ6_Kx8;
  if (CanRepackFP8x4(w) && k.fp8x4) return RepackKind::kFP8x4;
  if (CanRepackHalf4(w) && (w.type == GgmlType::F16 ? k.half4_f16 : k.half4_bf16)) return RepackKind::kHalf4;
  return RepackKind::kNone;
}

size_t BytesFor(RepackKind kind, const WeightMatrix& w) {
  switch (kind) {
    case RepackKind::kQ8_0x8:
    case RepackKind::kQ5_0AsQ8_0x8: return RepackedBytesQ8_0x8(w);
    case RepackKind::kQ5_0x8: return RepackedBytesQ5_0x8(w);
    case RepackKind::kQ4_Kx8: return RepackedBytesQ4_Kx8(w);
    case RepackKind::kQ5_Kx8: return RepackedBytesQ5_Kx8(w);
    case RepackKind::kQ6_Kx8: return RepackedBytesQ6_Kx8(w);
    case RepackKind::kFP8x4: return RepackedBytesFP8x4(w);
    default: return RepackedBytesHalf4(w);
  }
}

WeightMatrix Repack(RepackKind kind, const WeightMatrix& w, void* dst) {
  switch (kind) {
    case RepackKind::kQ8_0x8: return RepackQ8_0x8(w, dst);
    case RepackKind::kQ5_0AsQ8_0x8: return RepackQ5_0AsQ8_0x8(w, dst);
    case RepackKind::kQ5_0x8: return RepackQ5_0x8(w, dst);
    case RepackKind::kQ4_Kx8: return RepackQ4_Kx8(w, dst);
    case RepackKind::kQ5_Kx8: return RepackQ5_Kx8(w, dst);
    case RepackKind::kQ6_Kx8: return RepackQ6_Kx8(w, dst);
    case RepackKind::kFP8x4: return RepackFP8x4(w, dst);
    default: return RepackHalf4(w, dst);
  }
}

}  // namespace

void* RepackedWeights::Allocate(size_t bytes) {
  const size_t n = (bytes + 63) / 64 * 64;
  void* p = AllocateLarge(n);  // huge pages for the large stacks (base/large_alloc.h)
  PG_CHECK_MSG(p != nullptr, "out of memory for repacked weights");
  buffers_.emplace_back(p);
  bytes_ += n;
  return p;
}

WeightMatrix RepackedWeights::Add(const WeightMatrix& w, const CpuKernels& k) {
  const RepackKind kind = KindFor(w, k);
  if (kind == RepackKind::kNone) return w;
  return Repack(kind, w, Allocate(BytesFor(kind, w)));
}

void RepackedWeights::AddAll(const std::vector<WeightMatrix*>& ms, ThreadPool& pool, const CpuKernels& k,
                             FunctionRef<void(size_t, const WeightMatrix&)> copied) {
  // Allocate on this thread, copy in parallel.
  struct Job {
    size_t index;
    RepackKind kind;
    void* dst;
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < ms.size(); ++i) {
    const RepackKind kind = KindFor(*ms[i], k);
    if (kind == RepackKind::kNone) continue;
    jobs.push_back({i, kind, Allocate(BytesFor(kind, *ms[i]))});
  }
  pool.ParallelFor(static_cast<int64_t>(jobs.size()), [&](int64_t t) {
    const Job& j = jobs[static_cast<size_t>(t)];
    const WeightMatrix src = *ms[j.index];
    *ms[j.index] = Repack(j.kind, src, j.dst);
    copied(j.index, src);
  });
}

}  // namespace pg
