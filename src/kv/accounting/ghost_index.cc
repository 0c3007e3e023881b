#include "kv/accounting/ghost_index.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace pg {

uint64_t Fingerprint(const BlockHash& h) {
  uint64_t v;
  std::memcpy(&v, h.bytes.data(), sizeof(v));
  return v;
}

GhostIndex::GhostIndex(int64_t capacity_per_tier) : cap_(std::max<int64_t>(1, capacity_per_tier)) {}

void GhostIndex::Add(Ring& r, int64_t pos, int32_t delta) const {
  for (int64_t i = pos + 1; i <= cap_; i += i & -i) r.tree[size_t(i - 1)] += delta;
}

int64_t GhostIndex::Prefix(const Ring& r, int64_t pos) const {
  int64_t s = 0;
  for (int64_t i = pos + 1; i > 0; i -= i & -i) s += r.tree[size_t(i - 1)];
  return s;
}

int64_t GhostIndex::Range(const Ring& r, int64_t a, int64_t b) const {
  if (a > b) return 0;
  return Prefix(r, b) - (a > 0 ? Prefix(r, a - 1) : 0);
}

void GhostIndex::Remove(Ring& r, uint64_t ordinal) {
  const int64_t pos = int64_t(ordinal % uint64_t(cap_));
  r.ordinal_of.erase(r.fp[size_t(pos)]);
  Add(r, pos, -1);
}

void GhostIndex::NoteEvicted(int tier, uint64_t fp, double now_s) {
  PG_CHECK(tier >= 0 && tier < kTiers);
  Ring& r = rings_[tier];
  if (r.tree.empty()) {
    r.fp.assign(size_t(cap_), 0);
    r.at_s.assign(size_t(cap_), 0);
    r.stamp.assign(size_t(cap_), 0);
    r.tree.assign(size_t(cap_), 0);
  }
  auto it = r.ordinal_of.find(fp);
  if (it != r.ordinal_of.end()) Remove(r, it->second);
  const int64_t pos = int64_t(r.next % uint64_t(cap_));
  if (r.next >= uint64_t(cap_)) {  // the slot's previous block is forgotten
    auto old = r.ordinal_of.find(r.fp[size_t(pos)]);
    if (old != r.ordinal_of.end() && old->second == r.next - uint64_t(cap_)) Remove(r, old->second);
  }
  r.fp[size_t(pos)] = fp;
  r.at_s[size_t(pos)] = now_s;
  r.stamp[size_t(pos)] = ++stamp_;
  Add(r, pos, +1);
  r.ordinal_of[fp] = r.next;
  r.next++;
}

void GhostIndex::Forget(uint64_t fp, int below_tier) {
  for (int t = 0; t < std::min(below_tier, kTiers); ++t) {
    Ring& r = rings_[t];
    auto it = r.ordinal_of.find(fp);
    if (it != r.ordinal_of.end()) Remove(r, it->second);
  }
}

bool GhostIndex::Find(int tier, uint64_t fp, Record* out) const {
  const Ring& r = rings_[tier];
  auto it = r.ordinal_of.find(fp);
  if (it == r.ordinal_of.end()) return false;
  const uint64_t o = it->second;
  const int64_t pos = int64_t(o % uint64_t(cap_));
  // Remembered ordinals are in (next - cap, next); count those after o.
  const int64_t last = int64_t((r.next - 1) % uint64_t(cap_));
  int64_t after;
  if (pos <= last)
    after = Range(r, pos + 1, last);
  else
    after = Range(r, pos + 1, cap_ - 1) + Range(r, 0, last);
  out->rank = after;
  out->evicted_at_s = r.at_s[size_t(pos)];
  out->stamp = r.stamp[size_t(pos)];
  return true;
}

}  // namespace pg
