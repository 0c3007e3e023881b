#include "kv/policy/session_retention.h"

#include <algorithm>

namespace pg {

SessionRetention::SessionRetention(std::function<double()> clock, double default_ttl_s)
    : clock_(std::move(clock)), default_ttl_s_(default_ttl_s) {}

void SessionRetention::SetSessionBounds(size_t max_sessions, double idle_s) {
  max_sessions_ = std::max<size_t>(1, max_sessions);
  idle_s_ = idle_s;
  ForgetSessions(max_sessions_);
}

void SessionRetention::ForgetSessions(size_t keep) {
  const double now = clock_();
  size_t looked = 0;
  auto it = lru_.end();
  while (it != lru_.begin() && looked++ < max_sessions_) {
    --it;
    auto named = ids_.find(*it);
    const bool over = ids_.size() > keep;
    const bool idle = idle_s_ > 0 && named->second.last_use + idle_s_ <= now;
    if (!over && !idle) break;  // the rest were used more recently
    if (Retained(named->second.idx)) continue;
    deadline_.erase(named->second.idx);
    ids_.erase(named);
    it = lru_.erase(it);
    ++forgotten_;
  }
}

int32_t SessionRetention::Index(const std::string& session) {
  if (session.empty()) return -1;
  const double now = clock_();
  auto it = ids_.find(session);
  if (it != ids_.end()) {
    it->second.last_use = now;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.idx;
  }
  if (ids_.size() >= max_sessions_) ForgetSessions(max_sessions_ - 1);
  if (ids_.size() >= max_sessions_) return -1;  // every name retained: this one is not tracked
  lru_.push_front(session);
  ids_.emplace(session, Named{next_idx_, now, lru_.begin()});
  // Indexes are not reused (a block recorded under a forgotten one counts for nobody).
  next_idx_ = next_idx_ == INT32_MAX ? 0 : next_idx_ + 1;
  return ids_.at(session).idx;
}

void SessionRetention::Hint(const std::string& session, double ttl_s) {
  const int32_t idx = Index(session);
  if (idx < 0) return;
  deadline_[idx] = clock_() + (ttl_s < 0 ? default_ttl_s_ : ttl_s);
}

void SessionRetention::Release(const std::string& session) {
  auto it = ids_.find(session);
  if (it != ids_.end()) deadline_.erase(it->second.idx);
}

bool SessionRetention::Retained(int32_t session) const {
  if (session < 0 || deadline_.empty()) return false;
  auto it = deadline_.find(session);
  return it != deadline_.end() && it->second > clock_();
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
    if (count_[k] >= budget_[k]) Expire();                  // may erase entries: find h again below
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
  if (idle_s_ > 0 && now >= next_idle_check_) {  // idle names, about once a second
    next_idle_check_ = now + 1;
    ForgetSessions(max_sessions_);
  }
  if (next_expiry_ == 0 || next_expiry_ > now) return;
  next_expiry_ = 0;
  for (auto it = holds_.begin(); it != holds_.end();) {
    Holds& h = it->second;
    if (h.retain_until != 0 && h.retain_until <= now) h.retain_until = 0, --count_[0];
    if (h.pin_until != 0 && h.pin_until <= now) h.pin_until = 0, --count_[1];
    for (double d : {h.retain_until, h.pin_until})
      if (d != 0) next_expiry_ = next_expiry_ == 0 ? d : std::min(next_expiry_, d);
    if (h.retain_until == 0 && h.pin_until == 0)
      it = holds_.erase(it);
    else
      ++it;
  }
}

}  // namespace pg
