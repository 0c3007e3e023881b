#include "engine/token_counts.h"

#include <algorithm>

namespace pg {
namespace {

constexpr size_t kMinSlots = 16;

size_t SlotsFor(size_t distinct) {
  size_t n = kMinSlots;
  while (n < 2 * distinct) n *= 2;
  return n;
}

}  // namespace

void TokenCounts::Reserve(size_t distinct) {
  entries_.reserve(distinct);
  if (SlotsFor(distinct) > slots_.size()) Rehash(SlotsFor(distinct));
}

const TokenCounts::Entry* TokenCounts::Find(int32_t id) const {
  if (slots_.empty()) return nullptr;
  int32_t e = slots_[Probe(id)];
  return e < 0 ? nullptr : &entries_[static_cast<size_t>(e)];
}

size_t TokenCounts::Probe(int32_t id) const {
  const size_t mask = slots_.size() - 1;
  size_t s = (static_cast<uint32_t>(id) * 2654435761u) & mask;
  while (slots_[s] >= 0 && entries_[static_cast<size_t>(slots_[s])].id != id) s = (s + 1) & mask;
  return s;
}

TokenCounts::Entry& TokenCounts::Upsert(int32_t id) {
  if (2 * (entries_.size() + 1) > slots_.size()) Rehash(SlotsFor(std::max<size_t>(1, 2 * entries_.size())));
  size_t s = Probe(id);
  if (slots_[s] < 0) {
    slots_[s] = static_cast<int32_t>(entries_.size());
    entries_.push_back(Entry{id, 0, false});
  }
  return entries_[static_cast<size_t>(slots_[s])];
}

void TokenCounts::Rehash(size_t n_slots) {
  slots_.assign(n_slots, -1);
  for (size_t e = 0; e < entries_.size(); ++e) slots_[Probe(entries_[e].id)] = static_cast<int32_t>(e);
}

}  // namespace pg
