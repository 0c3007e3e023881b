// SessionRetention: deadlines that keep an agent session's blocks cached.
//
// The engine hints a session when its request asks for a cache ttl, and
// parks it for the session ttl when the model stops on a tool call (the
// conversation is expected back soon). Until the deadline, eviction takes
// that session's blocks only when nothing else is left. Sessions are named
// by the client; each name gets a small index that index entries record.
//
// Thread-safety: none; the scheduler thread owns it. The clock is called on
// that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace pg {

class SessionRetention {
 public:
  // clock: seconds (tests inject a fake one); default_ttl_s: the ttl of a
  // Hint() given ttl_s < 0.
  SessionRetention(std::function<double()> clock, double default_ttl_s);

  double now() const { return clock_(); }
  // Index of a session name, created on first use; -1 for "" (no session).
  int32_t Index(const std::string& session);
  // Keeps the session's blocks until now + ttl_s (ttl_s < 0: the default).
  void Hint(const std::string& session, double ttl_s);
  // Ends the hint at once (unknown names are ignored).
  void Release(const std::string& session);
  // True while session index `session` (-1 = none) is within its deadline.
  bool Retained(int32_t session) const;

 private:
  std::function<double()> clock_;
  double default_ttl_s_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<double> deadline_;  // clock seconds, per session index; 0 = none
};

}  // namespace pg
