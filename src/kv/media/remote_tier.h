// RemoteTier: KV blocks in Redis or Valkey (docs/kv-cache.md "Remote tier"),
// shared by every replica that serves the same model.
//
// Two background threads, each with its own RedisClient:
//   writer  write-behind: Write() copies a published block into a bounded
//           queue; the thread stores it (SET key value PX ttl). A full
//           queue, or Redis unavailable, drops the write (counted); the
//           caller never waits.
//   reader  read-on-miss: Lookup() queues the hashes of a prompt's blocks
//           past the local cache, in chain order; the thread GETs them
//           (pipelined, 16 at a time) until the first absent one, verifies
//           each value (remote_codec.h; a corrupt one is deleted) and posts
//           the blocks found; TakeFound() collects them. Every command has
//           the lookup's deadline; past it the lookup ends with what it has.
// After an error (unreachable, broken connection, deadline) both threads
// skip Redis for retry_after_s: lookups return nothing and writes drop.
//
// Size budget: bytes stored by this process are counted; a write that
// would pass max_bytes is refused. TTL expires old blocks; Redis'
// maxmemory policy (`prosgrow doctor` reports it) evicts the rest.
//
// RemoteTier is the remote tier's BlockMedium. Write(b) queues b as Write()
// does (a copy, written behind). Read(b) hands over the bytes of a block a
// lookup found, once the scheduler Stage()d them for the device-tier copy;
// so a block comes in from Redis by the same mover road as from disk.
//
// Thread-safety: Lookup, TakeFound, Write, Stage, Read, counters and
// DrainWrites may be called from any thread (the scheduler and mover threads).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "kv/accounting/remote_counters.h"
#include "kv/index/block_hash.h"
#include "kv/kv_layout.h"
#include "kv/media/block_medium.h"
#include "kv/media/redis_client.h"
#include "kv/media/remote_codec.h"
#include "kv/remote_config.h"

namespace pg {

// One block of a lookup: what the value must say.
struct RemoteWant {
  BlockHash hash;
  BlockHash parent;
  int32_t depth = 0;
  std::vector<int32_t> tokens;  // page_tokens
};

// A block found in Redis and verified.
struct RemoteBlock {
  RemoteWant info;
  std::vector<uint8_t> data;  // block_bytes
};

struct RemoteFound {
  uint64_t ticket = 0;
  std::vector<RemoteBlock> blocks;  // a prefix of the lookup's blocks, chain order
};

class RemoteTier final : public BlockMedium {
 public:
  // Parses the URL and starts the threads; connects lazily (an unreachable
  // Redis is a miss, not an error here).
  static Result<std::unique_ptr<RemoteTier>> Create(const RemoteTierConfig& config, const KvLayout& layout,
                                                    const std::string& model_identity);
  ~RemoteTier();  // stops the threads; queued writes are dropped
  RemoteTier(const RemoteTier&) = delete;
  RemoteTier& operator=(const RemoteTier&) = delete;

  const RemoteTierConfig& config() const { return cfg_; }
  const RemoteCodec& codec() const { return codec_; }

  // Queues a lookup of `want` (chain order) that ends by deadline_s
  // (NowSeconds clock); its result comes back through TakeFound with ticket.
  void Lookup(uint64_t ticket, std::vector<RemoteWant> want, double deadline_s);
  // Results of finished lookups (possibly none).
  std::vector<RemoteFound> TakeFound();

  // Queues a copy of the block for writing. False when it was not queued:
  // the queue is full or Redis is being skipped (counted as dropped), or the
  // block was stored already by this process.
  bool Write(const RemoteBlockInfo& info, const uint8_t* data);
  // Waits until no write is queued or running (at most timeout_s); true if so.
  bool DrainWrites(double timeout_s);

  // Keeps a found block's bytes for the copy into the device tier (Read).
  void Stage(const BlockHash& hash, std::vector<uint8_t> data);
  // BlockMedium. Read: the staged bytes of b (then forgotten); NotFound when
  // none are staged. Write: queues b (Ok even when the write is dropped:
  // dropping is the tier's policy, counted in counters()).
  Tier tier() const override { return kRemoteTier; }
  Pinning pinning() const override { return Pinning::kStaged; }
  uint64_t stored_bytes() const override { return codec_.value_bytes(); }
  Status Read(const BlockRef& b, uint8_t* dst) override;
  Status Write(const BlockRef& b, const uint8_t* src) override;

  RemoteCounters counters() const;

 private:
  RemoteTier(const RemoteTierConfig& config, const KvLayout& layout, const std::string& model_identity,
             RedisUrl endpoint);
  struct PendingWrite {
    RemoteWant info;
    std::vector<uint8_t> data;  // block_bytes, copied from the slot
  };
  struct PendingLookup {
    uint64_t ticket = 0;
    std::vector<RemoteWant> want;
    double deadline_s = 0;
  };
  void WriterLoop();
  void ReaderLoop();
  void WriteBatch(std::vector<PendingWrite>& batch);
  RemoteFound RunLookup(PendingLookup& l);
  bool Skipping() const;
  void Failed(const Status& why);

  RemoteTierConfig cfg_;
  KvLayout layout_;
  RemoteCodec codec_;
  RedisClient write_client_;  // writer thread only
  RedisClient read_client_;   // reader thread only

  mutable std::mutex mu_;
  std::condition_variable write_cv_, read_cv_, idle_cv_;
  std::deque<PendingWrite> writes_;
  bool writing_ = false;  // the writer holds a batch
  std::deque<PendingLookup> lookups_;
  std::vector<RemoteFound> found_;
  std::unordered_set<BlockHash, BlockHashHasher> stored_;                        // queued or stored by this process
  std::unordered_map<BlockHash, std::vector<uint8_t>, BlockHashHasher> staged_;  // found, awaiting Read
  bool stop_ = false;

  std::atomic<double> skip_until_s_{0};
  std::atomic<int64_t> lookups_n_{0}, lookup_blocks_{0}, hit_blocks_{0}, miss_blocks_{0}, errors_{0}, skipped_{0},
      corrupt_{0}, rejected_hmac_{0}, writes_n_{0}, write_bytes_{0}, dropped_{0}, budget_refused_{0},
      read_redirects_{0}, write_redirects_{0};
  std::thread writer_, reader_;
};

}  // namespace pg
