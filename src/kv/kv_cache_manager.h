// KvCacheManager: the tiered, paged KV cache as the engine sees it.
//
// Blocks (one page of tokens, all layers, K and V; see kv_layout.h) live in
// up to four tiers (Tier, base/kv_tier.h), each one medium (media/):
//   device  a bounded arena the kernels read (--kv-device-mem); every running
//           sequence's block table points here.
//   host    a RAM arena (--kv-host-mem), pinned memory on a GPU backend.
//   disk    one file per block under --kv-disk-dir, capped by --kv-disk-size.
//   remote  Redis / Valkey (--kv-remote), shared by replicas; read on a miss
//           into the device tier, written behind every published block.
// Full blocks are published in a prefix index keyed by a chained SHA-256 of
// (parent hash, block tokens, model identity, cache salt); tokens are compared
// on every hit. Evicted device blocks are demoted to host, host blocks to disk;
// hits in host or disk are promoted back to the device by background I/O
// threads while other sequences keep running.
//
// The verbs come in pairs: Match / ~PrefixMatch (the lock on a prefix),
// AllocateSequence / FreeSequence, Append / TruncateSequence (grow and
// roll back), HoldSession / ReleaseSession, StartRemoteLookup /
// RemoteLookupPending, Tick / WaitIdle (the moves in flight); with the
// questions CanAllocate and CanAppend before the verbs that take blocks.
// Verbs only tests need (LimitMatch, DroppedByPolicy, DrainRemoteWrites) are test support
// (kv_test_util.h, through KvCacheManager::TestAccess).
//
// Life of one sequence (nano-vllm style):
//   PrefixMatch m = kv.Match(prompt, request);        // locks the matched blocks
//   if (!kv.CanAllocate(kv.BlocksNeeded(m, n))) ...   // leave it queued (m unlocks on destruction)
//   kv.AllocateSequence(seq, std::move(m), n, &table); // starts promotions
//   while (!kv.PromotionReady(seq, &table)) run other sequences;
//   start = kv.CachedTokens(seq);                      // prefill tokens [start, n)
//   kv.CommitFullBlock(seq, i, tokens of block i);      // after block i is full
//   if (kv.CanAppend(seq, 1)) kv.Append(seq, 1, &table); // decode growth
//   kv.FreeSequence(seq);                              // blocks stay cached
//
// Thread-safety: every method must be called from ONE thread (the engine's
// scheduler thread). Background mover threads only copy block bytes; they talk
// to the manager through queues drained inside the calls below; they and the
// manager touch block bytes only through the media's copy calls. The forward
// pass may read/write the bytes of a sequence's blocks (DeviceBlockPtr) on any
// thread between calls, under these rules:
//   * block-table entries are valid only while the sequence is allocated
//     (until FreeSequence), and a PrefixMatch's blocks only while it is held;
//   * blocks [0, CachedTokens/page_tokens) are shared and read-only; the
//     sequence writes only slots at positions >= CachedTokens(seq);
//   * a sequence's blocks must not be read before PromotionReady(seq) is true.
// The device arena is told which slots the forward pass may touch
// (BlockArena::OpenForKernels): the slots of every settled sequence's table.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/kv_tier.h"
#include "base/status.h"
#include "kv/accounting/cache_counters.h"
#include "kv/accounting/hint_counters.h"
#include "kv/accounting/miss_counts.h"
#include "kv/index/block_hash.h"
#include "kv/kv_cache_config.h"
#include "kv/kv_layout.h"

namespace pg {

class KvBlockObserver;

// What the engine knows about one request when looking it up.
struct CacheRequest {
  std::string salt;              // cache salt (tenant isolation); "" = shared
  std::string session;           // agent session id, for retention hints; "" = none
  bool use_prefix_cache = true;  // false: no lookup, and the sequence's blocks are never published
};

class KvCacheManager;

// Result of Match(): the longest cached prefix (full blocks only) and a lock
// on its blocks. Move-only; destroying a match that was not passed to
// AllocateSequence unlocks its blocks. Must not outlive the manager.
class PrefixMatch : public TierTokens {
 public:
  PrefixMatch() = default;
  PrefixMatch(PrefixMatch&& o) noexcept;
  PrefixMatch& operator=(PrefixMatch&& o) noexcept;
  PrefixMatch(const PrefixMatch&) = delete;
  PrefixMatch& operator=(const PrefixMatch&) = delete;
  ~PrefixMatch();

  // The TierTokens: hit length per local tier, in tokens (multiples of
  // page_tokens; [kRemoteTier] stays 0: remote blocks are matched in the
  // device tier once imported); the tiers can alternate along the prefix.
  // tokens() = device + host + disk = the match.
  int64_t tokens() const { return total(); }

 private:
  friend class KvCacheManager;
  friend class SequenceTable;
  void Release();
  KvCacheManager* owner_ = nullptr;    // non-null while it holds locks
  std::vector<uint32_t> entries_;      // matched index entries, in chain order
  BlockHash root_;                     // hash of the empty prefix for (model, salt)
  int32_t session_ = -1;               // session index, -1 = none
  bool eligible_ = false;              // its full blocks may be published
  MatchStop stop_ = MatchStop::kNone;  // why the chain stopped at a present block
  MissExplanation explain_;            // filled by ExplainMisses
};

// What a KV hint asks of a prompt prefix (docs/kv-cache.md "KV hints").
enum class PrefixAction { kRetain, kPin, kDemote, kPrefetch };

// The outcome of one hint.
struct PrefixHintResult {
  int64_t blocks = 0;   // blocks acted on (held, demoted, loads started)
  std::string refused;  // why the hint was refused (in part); "" = not refused
};

class KvCacheManager {
 public:
  // Validates the config (clear error for bad sizes / unusable dir), sizes the
  // tiers, and rebuilds the disk index from disk_dir.
  static Result<std::unique_ptr<KvCacheManager>> Create(KvCacheConfig config);
  ~KvCacheManager();  // waits for in-flight moves (call Flush() first to persist to disk)
  KvCacheManager(const KvCacheManager&) = delete;
  KvCacheManager& operator=(const KvCacheManager&) = delete;

  const KvLayout& layout() const;
  int page_tokens() const { return layout().page_tokens; }
  int64_t device_blocks() const;  // capacity of the device tier

  // Longest cached prefix of `tokens`, across tiers, in full blocks. At most
  // (tokens.size() - 1) tokens are matched, so at least one token is always
  // left to compute the next-token logits. Locks the matched blocks.
  PrefixMatch Match(std::span<const int32_t> tokens, const CacheRequest& request);

  // Device blocks a sequence of total_tokens needs beyond the match's device hits.
  int64_t BlocksNeeded(const PrefixMatch& match, int64_t total_tokens) const;
  // True when n_blocks device blocks are free or can be evicted now.
  bool CanAllocate(int64_t n_blocks) const;

  // Builds seq's block table for total_tokens tokens (ceil(total/page) blocks):
  // matched device blocks are shared, host/disk hits get fresh device blocks
  // whose loads start now, the rest are fresh private blocks. Consumes `match`.
  // ResourceExhausted when the device tier cannot supply the blocks (the match
  // is then released and nothing changes).
  Status AllocateSequence(SeqId seq, PrefixMatch&& match, int64_t total_tokens, std::vector<BlockId>* block_table);

  // True once every promotion of seq finished (successfully or not); then
  // *block_table is refreshed: when a load failed, the blocks from the first
  // failed one onwards are replaced by fresh private blocks (to recompute).
  // Stays false while such replacement blocks cannot be had yet.
  bool PromotionReady(SeqId seq, std::vector<BlockId>* block_table);
  // Tokens of seq whose KV is present in its blocks (valid after
  // PromotionReady). Equals the match length unless a load failed, in which
  // case the chain is cut at the first failed block.
  int64_t CachedTokens(SeqId seq) const;
  // Per-sequence reuse by tier, after promotions settle (tokens; remote =
  // fetched from the remote tier for this request).
  TierTokens Reuse(SeqId seq) const;
  int64_t SequenceTokens(SeqId seq) const;  // tokens the table is sized for

  // Room for n_new_tokens more tokens (free or evictable blocks for the growth).
  bool CanAppend(SeqId seq, int64_t n_new_tokens) const;
  // Grows seq by n_new_tokens, appending new private blocks to block_table as needed.
  Status Append(SeqId seq, int64_t n_new_tokens, std::vector<BlockId>* block_table);

  // Shrinks seq to its first n_tokens tokens (speculative decoding rolls
  // back rejected draft positions): the blocks past ceil(n_tokens / page) are
  // released. Only private, unpublished blocks may go: InvalidArgument when
  // n_tokens would cut a committed or matched block, or exceeds the sequence.
  // Slots of positions >= n_tokens inside the kept last block are simply
  // overwritten later. Only after PromotionReady(seq).
  Status TruncateSequence(SeqId seq, int64_t n_tokens, std::vector<BlockId>* block_table);

  // After the forward pass filled block `block_index` of seq completely:
  // publishes it in the prefix index (hash chained on block_index-1, which must
  // already be committed or matched). block_tokens: its page_tokens tokens.
  // No-op when the sequence is not cache-eligible or the block was matched.
  // Only after PromotionReady(seq). Write-through also starts a copy to host.
  void CommitFullBlock(SeqId seq, int block_index, std::span<const int32_t> block_tokens);

  // Drops seq's references; its published blocks stay cached (evictable).
  void FreeSequence(SeqId seq);

  // Keep the blocks of `session` for ttl_s seconds from now (ttl_s < 0: the
  // config's default): eviction takes them only when nothing else is left;
  // ReleaseSession ends the hold.
  void HoldSession(const std::string& session, double ttl_s);
  void ReleaseSession(const std::string& session);

  // KV hints: applies `action` to the full blocks of `prefix` (the first
  // tokens of a prompt) that the index holds now for request.salt. Retain and
  // pin hold them for ttl_s (< 0: the default session ttl), within the
  // budgets; demote moves their unused device copies down a tier; prefetch
  // starts loads of their host/disk copies into free device slots.
  // request.session names the session whose quota is enforced after a demote.
  PrefixHintResult ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request, PrefixAction action,
                                   double ttl_s);
  // Counters of hints and quotas (gauges of live holds included).
  HintCounters hint_counters() const;

  // Call once per engine step: collects finished moves and starts background
  // demotions. Cheap when nothing happened.
  void Tick();
  // Waits for every in-flight move (background copies included).
  void WaitIdle();
  // Waits for every in-flight move, then writes every cached block that is
  // not on disk yet to disk (no-op without a disk tier), and waits (at most
  // 2 s) for the remote tier's queued writes. For clean shutdown.
  Status Flush();

  // Remote tier (docs/kv-cache.md "Remote tier"). StartRemoteLookup asks
  // Redis, in the background, for the full blocks of `tokens` past the ones
  // the local tiers hold (no-op without a remote tier or with nothing to
  // ask). RemoteLookupPending(seq) is true while that lookup runs, at most
  // until its deadline (--kv-remote-timeout-ms); once it ends the blocks
  // found are in the device tier and Match() finds them (reported as tier
  // "remote" in Reuse). Neither call ever waits on Redis.
  void StartRemoteLookup(SeqId seq, std::span<const int32_t> tokens, const CacheRequest& request);
  bool RemoteLookupPending(SeqId seq);
  // Remote lookups the scheduler is waiting for.
  int64_t remote_lookups_pending() const;

  // Memory of device block `id` (block_bytes(), 64-byte aligned, stable).
  uint8_t* DeviceBlockPtr(BlockId id);

  CacheCounters counters() const;
  // Told of every block a tier starts or stops holding (kv_block_observer.h);
  // null = none. Set before the first request.
  void SetBlockObserver(KvBlockObserver* observer);

  // Miss accounting (docs/kv-cache.md, "Miss reasons"). Call once per
  // admitted request, on the match that will be allocated, before
  // AllocateSequence: classifies every uncached token of `tokens` and the
  // what-if hits; AllocateSequence then counts it in counters().miss and
  // whatif, and Misses(seq) returns it (failed loads move to `loading`).
  void ExplainMisses(PrefixMatch* match, std::span<const int32_t> tokens);
  MissCounts Misses(SeqId seq) const;
  // Verifies refcounts, free lists, the index's parent chains and tier
  // bookkeeping; Internal error naming the first violation.
  Status CheckIntegrity() const;

  class Impl;
  struct TestAccess;  // test support (kv_test_util.h): the verbs only tests call

 private:
  friend class PrefixMatch;
  explicit KvCacheManager(std::unique_ptr<Impl> impl);
  void ReleaseMatch(PrefixMatch* m);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pg
