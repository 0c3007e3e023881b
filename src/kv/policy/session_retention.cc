#include "kv/policy/session_retention.h"

#include <algorithm>

namespace pg {

SessionRetention::SessionRetention(std::function<double()> clock, double default_ttl_s)
    : clock_(std::move(clock)), default_ttl_s_(default_ttl_s) {}

int32_t SessionRetention::Index(const std::string& session) {
  if (session.empty()) return -1;
  auto [it, inserted] = ids_.emplace(session, int32_t(deadline_.size()));
  if (inserted) deadline_.push_back(0);
  return it->second;
}

void SessionRetention::Hint(const std::string& session, double ttl_s) {
  const int32_t idx = Index(session);
  if (idx < 0) return;
  deadline_[size_t(idx)] = clock_() + (ttl_s < 0 ? default_ttl_s_ : ttl_s);
}

void SessionRetention::Release(const std::string& session) {
  auto it = ids_.find(session);
  if (it != ids_.end()) deadline_[size_t(it->second)] = 0;
}

bool SessionRetention::Retained(int32_t session) const {
  return session >= 0 && size_t(session) < deadline_.size() && deadline_[size_t(session)] > clock_();
}

void SessionRetention::SetBudget(BlockHold kind, int64_t blocks) { budget_[Slot(kind)] = std::max<int64_t>(0, blocks); }

bool SessionRetention::HoldBlock(const BlockHash& h, BlockHold kind, double ttl_s) {
  const double now = clock_();
  const double until = now + (ttl_s < 0 ? default_ttl_s_ : ttl_s);
  if (until <= now) return true;  // a zero ttl holds nothing
  const int k = Slot(kind);
  auto slot_of = [&](Holds& x) { return k == 1 ? &x.pin_until : &x.retain_until; };
  auto it = holds_.find(h);
  if (it == holds_.end() || *slot_of(it->second) <= now) {  // a new hold: within the budget
    if (count_[k] >= budget_[k]) Expire();  // may erase entries: find h again below
    if (count_[k] >= budget_[k]) return false;
    it = holds_.try_emplace(h).first;
    if (*slot_of(it->second) == 0) ++count_[k];  // an expired hold not yet dropped is still counted
  }
  double* slot = slot_of(it->second);
  *slot = std::max(*slot, until);
  next_expiry_ = next_expiry_ == 0 ? *slot : std::min(next_expiry_, *slot);
  return true;
}

void SessionRetention::ReleaseBlock(const BlockHash& h) {
  auto it = holds_.find(h);
  if (it == holds_.end()) return;
  if (it->second.retain_until != 0) --count_[0];
  if (it->second.pin_until != 0) --count_[1];
  holds_.erase(it);
}

int64_t SessionRetention::held(BlockHold kind) {
  Expire();
  return count_[Slot(kind)];
}

BlockHold SessionRetention::HoldOf(int32_t session, const BlockHash& h) const {
  BlockHold hold = Retained(session) ? BlockHold::kSession : BlockHold::kNone;
  if (holds_.empty()) return hold;
  auto it = holds_.find(h);
  if (it == holds_.end()) return hold;
  const double now = clock_();
  if (it->second.pin_until > now) return BlockHold::kPinned;
  if (it->second.retain_until > now) return BlockHold::kRetained;
  return hold;
}

void SessionRetention::Expire() {
  const double now = clock_();
  if (next_expiry_ == 0 || next_expiry_ > now) return;
  next_expiry_ = 0;
  for (auto it = holds_.begin(); it != holds_.end();) {
    Holds& h = it->second;
    if (h.retain_until != 0 && h.retain_until <= now) h.retain_until = 0, --count_[0];
    if (h.pin_until != 0 && h.pin_until <= now) h.pin_until = 0, --count_[1];
    for (double d : {h.retain_until, h.pin_until})
      if (d != 0) next_expiry_ = next_expiry_ == 0 ? d : std::min(next_expiry_, d);
    if (h.retain_until == 0 && h.pin_until == 0) it = holds_.erase(it);
    else ++it;
  }
}

}  // namespace pg
