// SessionRetention: deadlines that keep an agent session's blocks cached,
// and per-block holds from explicit KV hints.
//
// Session deadlines: the engine hints a session when its request asks for a
// cache ttl, and parks it for the session ttl when the model stops on a tool
// call (the conversation is expected back soon). Until the deadline, eviction
// takes that session's blocks only when nothing else is left. Sessions are
// named by the client (the server scopes names by tenant); each name gets an
// index that index entries record. Indexes are never reused, so a block
// recorded under a forgotten name never counts for a new one.
//
// The name table is bounded: at most max_sessions names (least recently
// used first out; a retained session is passed over while others can go),
// and a name unused for idle_s (and not retained) is forgotten. A
// forgotten name that comes back is a new session. Memory therefore does not
// grow with the number of names ever seen.
//
// Block holds (kv_hints "retain" / "pin", Anthropic cache_control): a hold
// names one block by its chained hash, so it covers exactly that prefix, is
// shared by every session that uses the prefix, and survives the entry being
// dropped and re-created. A hold has a deadline; each kind has a budget in
// blocks, and a hold past its budget is refused (the caller reports it).
// What a hold means for eviction is EvictionPolicy's business
// (eviction_policy.h): retained blocks never leave the host and disk tiers
// before the deadline, pinned blocks never leave the cache.
//
// Thread-safety: none; the scheduler thread owns it. The clock is called on
// that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/index/block_hash.h"

namespace pg {

// The strongest hold on a block now; ordered (a larger hold goes later).
enum class BlockHold : uint8_t {
  kNone = 0,
  kSession = 1,   // its session is retained (Hint, tool-call parking)
  kRetained = 2,  // a retain hint on the block
  kPinned = 3,    // a pin hint on the block
};

class SessionRetention {
 public:
  // clock: seconds (tests inject a fake one); default_ttl_s: the ttl of a
  // Hint() given ttl_s < 0.
  SessionRetention(std::function<double()> clock, double default_ttl_s);
  // Bounds of the name table (defaults: 65,536 names, 3,600 s idle).
  void SetSessionBounds(size_t max_sessions, double idle_s);
  size_t sessions() const { return ids_.size(); }
  int64_t forgotten_sessions() const { return forgotten_; }

  double now() const { return clock_(); }
  double default_ttl_s() const { return default_ttl_s_; }
  // Index of a session name, created on first use (and marked used now); -1
  // for "" (no session), and for a new name when every name in a full table
  // is retained.
  int32_t Index(const std::string& session);
  // Keeps the session's blocks until now + ttl_s (ttl_s < 0: the default).
  void Hint(const std::string& session, double ttl_s);
  // Ends the hint at once (unknown names are ignored).
  void Release(const std::string& session);
  // True while session index `session` (-1 = none) is within its deadline.
  bool Retained(int32_t session) const;

  // ---- block holds (kind: kRetained or kPinned; kSession is never stored)
  // Most live holds of a kind, in blocks (default: unbounded for retain, 0 for pin).
  void SetBudget(BlockHold kind, int64_t blocks);
  int64_t budget(BlockHold kind) const { return budget_[Slot(kind)]; }
  // Holds block `h` until now + ttl_s (ttl_s < 0: the default); a hold that
  // already exists is extended, never shortened. False, and nothing changes,
  // when the block is not held yet and the kind's budget is full.
  bool HoldBlock(const BlockHash& h, BlockHold kind, double ttl_s);
  // Ends every hold of block h (unknown hashes are ignored).
  void ReleaseBlock(const BlockHash& h);
  // Live holds of a kind (expired ones are dropped first).
  int64_t held(BlockHold kind);
  // The hold on a block of session `session` whose hash is h, now.
  BlockHold HoldOf(int32_t session, const BlockHash& h) const;
  // Drops expired holds (cheap when none expired; call once per step).
  void Expire();

 private:
  struct Holds {
    double retain_until = 0;  // clock seconds; 0 = none
    double pin_until = 0;
  };
  static int Slot(BlockHold kind) { return kind == BlockHold::kPinned ? 1 : 0; }

  struct Named {
    int32_t idx = -1;
    double last_use = 0;                   // clock seconds
    std::list<std::string>::iterator lru;  // its place in lru_
  };
  // Forgets names: the least recently used while more than `keep`, and the
  // idle ones; retained names stay (up to max_sessions_ looked at per call).
  void ForgetSessions(size_t keep);

  std::function<double()> clock_;
  double default_ttl_s_;
  size_t max_sessions_ = 65536;
  double idle_s_ = 3600;
  std::unordered_map<std::string, Named> ids_;
  std::list<std::string> lru_;                    // names, most recently used first
  std::unordered_map<int32_t, double> deadline_;  // clock seconds, per retained session index
  int32_t next_idx_ = 0;
  int64_t forgotten_ = 0;
  double next_idle_check_ = 0;
  std::unordered_map<BlockHash, Holds, BlockHashHasher> holds_;
  int64_t count_[2] = {0, 0};           // live holds per kind (retain, pin)
  int64_t budget_[2] = {INT64_MAX, 0};  // budget per kind, in blocks
  double next_expiry_ = 0;              // earliest deadline among holds_ (0 = none)
};

}  // namespace pg
