// Private to src/kv: the state behind KvCacheManager, split over
// kv_cache_manager.cc (sequences, lookups, commits) and tier_movement.cc
// (eviction, demotion, promotion, completions). Scheduler thread only.
//
// Ownership of a device slot (pool refcount = holders):
//   * each sequence whose block table lists it holds one reference;
//   * each in-flight move that reads or writes it holds one reference;
//   * device_owner[slot] names the index entry whose cached copy it is
//     (or -1 for a sequence's private block). An owned slot with refcount 0
//     is "cached": evictable unless its entry is locked.
// Host slots are the same, without sequence references.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv/block_arena.h"
#include "kv/block_mover.h"
#include "kv/block_pool.h"
#include "kv/disk_tier.h"
#include "kv/kv_cache_manager.h"
#include "kv/prefix_index.h"

namespace pg {

class KvCacheManager::Impl {
 public:
  explicit Impl(KvCacheConfig config);
  Status Init();

  struct Seq {
    std::vector<BlockId> table;       // ceil(n_tokens / page) device slots
    int64_t n_tokens = 0;
    BlockHash root;
    bool eligible = false;
    int32_t session = -1;
    std::vector<BlockHash> hashes;    // hashes of blocks [0, hashes.size()) (matched or committed)
    std::vector<uint32_t> matched;    // matched entries, chain order
    std::vector<uint8_t> matched_tier;  // tier each matched block was found in
    std::vector<uint32_t> loading;    // entries whose loads this sequence waits on (locked)
    bool settled = true;
    int64_t cached_tokens = 0;
    SequenceReuse reuse;
  };

  enum class MoveKind { kDeviceToHost, kHostToDevice, kDiskToDevice, kHostToDisk, kDeviceToDisk };
  struct Move {
    MoveKind kind;
    uint32_t entry;
    int32_t device = -1;
    int32_t host = -1;
  };

  // --- sequences and lookups (kv_cache_manager.cc)
  PrefixMatch Match(std::span<const int32_t> tokens, const CacheRequest& request, KvCacheManager* owner);
  void ReleaseMatch(PrefixMatch* m);
  Status AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens, std::vector<BlockId>* table);
  bool PromotionReady(SeqId id, std::vector<BlockId>* table);
  bool Settle(SeqId id, Seq& s);
  void CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens);
  void FreeSequence(SeqId id);
  Status Append(SeqId id, int64_t n_new, std::vector<BlockId>* table);
  int64_t BlocksFor(int64_t tokens) const { return (tokens + page_ - 1) / page_; }
  int32_t SessionIndex(const std::string& session);
  bool Retained(const IndexEntry& e) const;
  void Touch(IndexEntry& e, int32_t session);
  Status CheckIntegrity() const;
  CacheCounters Counters() const;

  // --- tier movement (tier_movement.cc)
  int64_t EvictableDevice() const { return int64_t(index_.evictable(kDeviceTier).size()); }
  // Cached device blocks held only by in-flight copies (evictable once they land).
  int64_t DrainingDevice() const;
  bool CanAllocate(int64_t n) const {
    return n <= 0 || device_pool_.n_free() + EvictableDevice() >= n || device_pool_.n_free() + EvictableDevice() + DrainingDevice() >= n;
  }
  void PrepareDeviceRoom(int64_t n);      // starts demotions for n slots in parallel
  int32_t AllocDeviceSlot();                // evicts (and waits) as needed; -1 when impossible
  int32_t AllocHostSlot(bool may_wait);     // -1 when impossible without waiting / at all
  bool EvictOne(int tier, bool may_wait);   // frees one slot / disk block of that tier
  uint32_t PickVictim(int tier, bool need_clean) const;
  bool MakeDiskRoom();
  void DropCopy(uint32_t id, int tier);
  void UnrefDevice(int32_t slot);
  void UnrefHost(int32_t slot);
  void RefreshEntry(uint32_t id);
  void MaybeErase(uint32_t id);
  uint64_t Submit(const Move& m);
  uint64_t StartWriteToHost(uint32_t id, int32_t host_slot);  // returns the move tag
  uint64_t StartWriteToDisk(uint32_t id, bool from_host);     // 0 when no room
  void StartLoad(uint32_t id, int32_t device_slot);
  void ProcessCompletions(bool wait_for_one);
  void WaitFor(uint64_t tag);
  void WaitAll();
  bool WaitForAnyMove();  // false when nothing is in flight
  void Finish(const Move& m, const Status& st);
  void SettleAll();
  void CleanInBackground();
  void DisableDiskWrites(const Status& why);
  Status Flush();
  bool host_enabled() const { return host_pool_.capacity() > 0; }
  bool disk_enabled() const { return disk_ != nullptr; }
  bool disk_writable() const { return disk_ != nullptr && disk_writes_ok_; }

  KvCacheConfig cfg_;
  KvLayout layout_;
  int page_;
  std::unique_ptr<BlockArena> device_arena_;
  std::unique_ptr<BlockArena> host_arena_;
  BlockPool device_pool_{0};
  BlockPool host_pool_{0};
  std::vector<int32_t> device_owner_;  // per device slot: entry id or -1
  std::vector<int32_t> host_owner_;    // per host slot: entry id or -1
  std::unique_ptr<DiskTier> disk_;
  int64_t disk_capacity_blocks_ = 0;
  int64_t disk_used_blocks_ = 0;       // entries with on_disk || disk_writing
  bool disk_writes_ok_ = true;
  PrefixIndex index_;
  std::unique_ptr<BlockMover> mover_;
  std::unordered_map<uint64_t, Move> moves_;  // in flight, by tag
  uint64_t next_tag_ = 1;
  std::unordered_map<SeqId, Seq> seqs_;
  std::unordered_set<SeqId> unsettled_;
  std::unordered_map<std::string, int32_t> session_ids_;
  std::vector<double> session_deadline_;  // clock seconds, per session index
  int64_t match_locks_ = 0;               // entry locks held by live PrefixMatch handles
  uint64_t tick_ = 0;
  CacheCounters c_;
  bool in_wait_ = false;  // inside WaitFor: no settling (avoids re-entrant allocation)
};

}  // namespace pg
