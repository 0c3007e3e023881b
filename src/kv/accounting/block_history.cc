#include "kv/accounting/block_history.h"

#include <bit>
#include <cstddef>

namespace pg {
namespace {
constexpr int64_t kWays = 4;
uint64_t NonZero(uint64_t fp) { return fp == 0 ? 1 : fp; }
}  // namespace

FingerprintSet::FingerprintSet(int64_t slots)
    : slots_(int64_t(std::bit_ceil(uint64_t(slots < kWays ? kWays : slots)))) {}

void FingerprintSet::Insert(uint64_t fp) {
  fp = NonZero(fp);
  if (table_.empty()) table_.assign(size_t(slots_), 0);
  const uint64_t base = (fp % uint64_t(slots_ / kWays)) * kWays;
  for (int64_t w = 0; w < kWays; ++w) {
    uint64_t& s = table_[size_t(base + uint64_t(w))];
    if (s == fp) return;
    if (s == 0) {
      s = fp;
      return;
    }
  }
  table_[size_t(base + (fp >> 62))] = fp;  // bucket full: overwrite one slot (chosen by the fingerprint)
}

bool FingerprintSet::Contains(uint64_t fp) const {
  fp = NonZero(fp);
  if (table_.empty()) return false;
  const uint64_t base = (fp % uint64_t(slots_ / kWays)) * kWays;
  for (int64_t w = 0; w < kWays; ++w)
    if (table_[size_t(base + uint64_t(w))] == fp) return true;
  return false;
}

}  // namespace pg
