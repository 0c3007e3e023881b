// KvEventBridge: turns the KV tiers' block changes (KvBlockObserver) into
// vLLM-format KV events on a ZMQ publisher (src/kvevents), one batch per
// engine step. A block's event carries its tokens (only with `tokens`, i.e.
// --kv-events-tokens on; off: token_ids is empty and the hashes, which
// are salted per tenant, are all a subscriber learns), its parent's hash (none
// for a sequence's first block) and its tier as the medium; consecutive
// blocks of one chain stored in one tier within a step share one
// BlockStored event, as vLLM groups a request's new blocks.
//
// On creation it publishes AllBlocksCleared (a router drops what it knew of
// a restarted replica), then, once attached, every block the tiers already
// hold (the disk tier's, indexed at start-up).
//
// Thread-safety: the observer calls and Flush() run on the engine thread;
// the counters may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "kv/index/kv_block_observer.h"
#include "kvevents/event_publisher.h"
#include "metrics/metric_set.h"

namespace pg {

class KvEventBridge final : public KvBlockObserver {
 public:
  // Opens the publisher's sockets (event_publisher.h).
  static Result<std::unique_ptr<KvEventBridge>> Create(const KvEventPublisherOptions& options, int block_size,
                                                       bool tokens = true);

  void OnBlockStored(int tier, const IndexEntry& e) override;
  void OnBlockRemoved(int tier, const IndexEntry& e) override;
  // Publishes what this step changed (nothing when nothing did).
  void Flush();

  // The /metrics families: batches sent and dropped.
  void CollectMetrics(MetricSet* out) const;
  const std::string& endpoint() const { return publisher_->endpoint(); }
  const std::string& replay_endpoint() const { return publisher_->replay_endpoint(); }
  const std::string& curve_public_key() const { return publisher_->curve_public_key(); }

 private:
  KvEventBridge(std::unique_ptr<KvEventPublisher> publisher, int block_size, bool tokens)
      : publisher_(std::move(publisher)), block_size_(block_size), tokens_(tokens) {}

  std::unique_ptr<KvEventPublisher> publisher_;
  int block_size_;
  bool tokens_;  // BlockStored carries token ids
  KvEventBatch pending_;
};

// The medium name of a tier ("GPU", "CPU", "DISK").
const char* MediumOfTier(int tier);

}  // namespace pg
