#include "kvevents/event_encoder.h"

#include <msgpack.hpp>
#include <type_traits>

namespace pg {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void PackHashes(Packer& pk, const std::vector<EventBlockHash>& hashes) {
  pk.pack_array(static_cast<uint32_t>(hashes.size()));
  for (EventBlockHash h : hashes) pk.pack_uint64(h);
}

void PackEvent(Packer& pk, const KvEvent& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, BlockStoredEvent>) {
          pk.pack_array(7);
          pk.pack(std::string("BlockStored"));
          PackHashes(pk, e.block_hashes);
          if (e.parent_block_hash)
            pk.pack_uint64(*e.parent_block_hash);
          else
            pk.pack_nil();
          pk.pack_array(static_cast<uint32_t>(e.token_ids.size()));
          for (int32_t t : e.token_ids) pk.pack_int32(t);
          pk.pack_int32(e.block_size);
          pk.pack_nil();  // lora_id: prosgrow serves no adapters
          pk.pack(e.medium);
        } else if constexpr (std::is_same_v<T, BlockRemovedEvent>) {
          pk.pack_array(3);
          pk.pack(std::string("BlockRemoved"));
          PackHashes(pk, e.block_hashes);
          pk.pack(e.medium);
        } else {
          pk.pack_array(1);
          pk.pack(std::string("AllBlocksCleared"));
        }
      },
      event);
}

}  // namespace

EventBlockHash EventHashOf(const uint8_t* sha256) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | sha256[i];
  return v >> 1;
}

EventBlockHash EventHashOf(const uint8_t (&sha256)[32]) { return EventHashOf(&sha256[0]); }

std::string EncodeKvEventBatch(const KvEventBatch& batch) {
  msgpack::sbuffer buf;
  Packer pk(buf);
  pk.pack_array(batch.data_parallel_rank ? 3 : 2);
  pk.pack_double(batch.ts);
  pk.pack_array(static_cast<uint32_t>(batch.events.size()));
  for (const KvEvent& e : batch.events) PackEvent(pk, e);
  if (batch.data_parallel_rank) pk.pack_int32(*batch.data_parallel_rank);
  return std::string(buf.data(), buf.size());
}

}  // namespace pg
