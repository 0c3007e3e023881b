#include "route/event_decoder.h"

#include <fmt/format.h>

#include <msgpack.hpp>

namespace pg {
namespace {

using Obj = msgpack::object;

std::vector<EventBlockHash> Hashes(const Obj& o) {
  std::vector<EventBlockHash> out;
  for (const Obj& h : o.as<std::vector<Obj>>()) out.push_back(h.as<uint64_t>());
  return out;
}

KvEvent DecodeEvent(const Obj& o) {
  auto f = o.as<std::vector<Obj>>();
  if (f.empty()) throw msgpack::type_error();
  const std::string tag = f[0].as<std::string>();
  if (tag == "BlockStored" && f.size() >= 7) {
    BlockStoredEvent e;
    e.block_hashes = Hashes(f[1]);
    if (!f[2].is_nil()) e.parent_block_hash = f[2].as<uint64_t>();
    e.token_ids = f[3].as<std::vector<int32_t>>();
    e.block_size = f[4].as<int32_t>();
    if (!f[6].is_nil()) e.medium = f[6].as<std::string>();
    return e;
  }
  if (tag == "BlockRemoved" && f.size() >= 3) {
    BlockRemovedEvent e;
    e.block_hashes = Hashes(f[1]);
    if (!f[2].is_nil()) e.medium = f[2].as<std::string>();
    return e;
  }
  if (tag == "AllBlocksCleared") return AllBlocksClearedEvent{};
  throw std::invalid_argument("unknown KV event '" + tag + "'");
}

}  // namespace

Result<KvEventBatch> DecodeKvEventBatch(std::string_view payload) {
  try {
    msgpack::object_handle oh = msgpack::unpack(payload.data(), payload.size());
    auto top = oh.get().as<std::vector<Obj>>();
    if (top.size() < 2) return InvalidArgument("KV event batch: fewer than 2 fields");
    KvEventBatch b;
    b.ts = top[0].as<double>();
    for (const Obj& e : top[1].as<std::vector<Obj>>()) b.events.push_back(DecodeEvent(e));
    if (top.size() >= 3 && !top[2].is_nil()) b.data_parallel_rank = top[2].as<int32_t>();
    return b;
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("KV event batch: {}", e.what()));
  }
}

}  // namespace pg
