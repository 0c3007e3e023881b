// SessionRetention: deadlines that keep an agent session's blocks cached,
// and per-block holds from explicit KV hints.
//
// Session deadlines: the engine hints a session when its request asks for a
// cache ttl, and parks it for the session ttl when the model stops on a tool
// call (the conversation is expected back soon). Until the deadline, eviction
// takes that session's blocks only when nothing else is left. Sessions are
// named by the client; each name gets a small index that index entries record.
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

  double now() const { return clock_(); }
  double default_ttl_s() const { return default_ttl_s_; }
  // Index of a session name, created on first use; -1 for "" (no session).
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

  std::function<double()> clock_;
  double default_ttl_s_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<double> deadline_;  // clock seconds, per session index; 0 = none
  std::unordered_map<BlockHash, Holds, BlockHashHasher> holds_;
  int64_t count_[2] = {0, 0};           // live holds per kind (retain, pin)
  int64_t budget_[2] = {INT64_MAX, 0};  // budget per kind, in blocks
  double next_expiry_ = 0;              // earliest deadline among holds_ (0 = none)
};

}  // namespace pg
