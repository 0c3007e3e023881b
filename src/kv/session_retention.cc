#include "kv/session_retention.h"

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
  return session >= 0 && deadline_[size_t(session)] > clock_();
}

}  // namespace pg
