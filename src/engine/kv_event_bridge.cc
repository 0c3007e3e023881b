#include "engine/kv_event_bridge.h"

#include <fmt/format.h>

#include <chrono>

namespace pg {
namespace {

double NowEpochSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

const char* MediumOfTier(int tier) {
  switch (tier) {
    case kDeviceTier: return kMediumDevice;
    case kHostTier: return kMediumHost;
    case kDiskTier: return kMediumDisk;
  }
  return "?";
}

Result<std::unique_ptr<KvEventBridge>> KvEventBridge::Create(const KvEventPublisherOptions& options, int block_size,
                                                             bool tokens) {
  PG_ASSIGN_OR_RETURN(auto publisher, KvEventPublisher::Create(options));
  auto bridge = std::unique_ptr<KvEventBridge>(new KvEventBridge(std::move(publisher), block_size, tokens));
  bridge->pending_.events.push_back(AllBlocksClearedEvent{});
  bridge->Flush();
  return bridge;
}

void KvEventBridge::OnBlockStored(int tier, const IndexEntry& e) {
  const EventBlockHash hash = EventHashOf(e.hash.bytes.data());
  const char* medium = MediumOfTier(tier);
  if (!pending_.events.empty()) {
    auto* last = std::get_if<BlockStoredEvent>(&pending_.events.back());
    // The next block of the chain the last event ends with: extend it.
    if (last != nullptr && last->medium == medium && e.depth > 0 &&
        last->block_hashes.back() == EventHashOf(e.parent.bytes.data())) {
      last->block_hashes.push_back(hash);
      if (tokens_) last->token_ids.insert(last->token_ids.end(), e.tokens.begin(), e.tokens.end());
      return;
    }
  }
  BlockStoredEvent ev;
  ev.block_hashes = {hash};
  if (e.depth > 0) ev.parent_block_hash = EventHashOf(e.parent.bytes.data());
  if (tokens_) ev.token_ids.assign(e.tokens.begin(), e.tokens.end());
  ev.block_size = block_size_;
  ev.medium = medium;
  pending_.events.push_back(std::move(ev));
}

void KvEventBridge::OnBlockRemoved(int tier, const IndexEntry& e) {
  const EventBlockHash hash = EventHashOf(e.hash.bytes.data());
  const char* medium = MediumOfTier(tier);
  if (!pending_.events.empty()) {
    auto* last = std::get_if<BlockRemovedEvent>(&pending_.events.back());
    if (last != nullptr && last->medium == medium) {
      last->block_hashes.push_back(hash);
      return;
    }
  }
  pending_.events.push_back(BlockRemovedEvent{{hash}, medium});
}

void KvEventBridge::Flush() {
  if (pending_.events.empty()) return;
  pending_.ts = NowEpochSeconds();
  publisher_->Publish(std::move(pending_));
  pending_ = KvEventBatch{};
}

void KvEventBridge::CollectMetrics(MetricSet* out) const {
  out->Counter("prosgrow_kv_event_batches_total", "KV event batches published on --kv-events (vLLM's format).",
               publisher_->sent());
  out->Counter("prosgrow_kv_event_batches_dropped_total", "KV event batches dropped because the send queue was full.",
               publisher_->dropped());
}

}  // namespace pg
