// KvCacheManager::Impl, part 3: CheckIntegrity() and the counters snapshot.
#include <fmt/format.h>

#include "base/units.h"
#include "kv/kv_cache_manager_impl.h"

namespace pg {

Status KvCacheManager::Impl::CheckIntegrity() const {
  PG_RETURN_IF_ERROR(device_pool_.CheckIntegrity());
  PG_RETURN_IF_ERROR(host_pool_.CheckIntegrity());
  PG_RETURN_IF_ERROR(index_.CheckIntegrity());

  // Expected references: block tables plus in-flight moves.
  std::vector<int32_t> dev_refs(size_t(device_pool_.capacity()), 0);
  std::vector<int32_t> host_refs(size_t(host_pool_.capacity()), 0);
  int64_t loading_locks = 0;
  for (const auto& [id, s] : seqs_) {
    if (int64_t(s.table.size()) != BlocksFor(s.n_tokens)) {
      return Internal(fmt::format("seq {}: {} blocks for {} tokens", id, s.table.size(), s.n_tokens));
    }
    if (s.hashes.size() > s.table.size() || s.matched.size() > s.hashes.size() || s.matched.size() != s.matched_tier.size()) {
      return Internal(fmt::format("seq {}: inconsistent chain bookkeeping", id));
    }
    if (s.settled == bool(unsettled_.count(id))) return Internal(fmt::format("seq {}: settled flag disagrees", id));
    if (s.settled && !s.loading.empty()) return Internal(fmt::format("seq {}: settled with loads", id));
    for (size_t i = 0; i < s.table.size(); ++i) {
      const int32_t slot = s.table[i];
      if (slot < 0 || slot >= device_pool_.capacity()) return Internal(fmt::format("seq {}: bad slot {}", id, slot));
      dev_refs[size_t(slot)]++;
      for (size_t j = 0; j < i; ++j)
        if (s.table[j] == slot) return Internal(fmt::format("seq {}: slot {} twice in its table", id, slot));
    }
    if (s.settled) {
      for (size_t i = 0; i < s.matched.size(); ++i) {
        // Matched blocks read from the index: same slot as the entry's device copy, or a private one.
        const int32_t owner = device_owner_[size_t(s.table[i])];
        if (owner >= 0 && index_.at(uint32_t(owner)).hash != s.hashes[i]) {
          return Internal(fmt::format("seq {}: block {} holds another block's data", id, i));
        }
      }
    }
    loading_locks += int64_t(s.loading.size());
  }
  for (const auto& [tag, m] : moves_) {
    if (m.device >= 0) dev_refs[size_t(m.device)]++;
    if (m.host >= 0) host_refs[size_t(m.host)]++;
  }
  for (int32_t slot = 0; slot < device_pool_.capacity(); ++slot) {
    if (device_pool_.refcount(slot) != dev_refs[size_t(slot)]) {
      return Internal(fmt::format("device slot {}: refcount {} but {} holders", slot, device_pool_.refcount(slot),
                                  dev_refs[size_t(slot)]));
    }
    const int32_t owner = device_owner_[size_t(slot)];
    if (owner >= 0) {
      if (device_pool_.is_free(slot)) return Internal(fmt::format("device slot {}: free but owned", slot));
      if (owner >= int32_t(index_.id_limit()) || !index_.at(uint32_t(owner)).live || index_.at(uint32_t(owner)).device != slot) {
        return Internal(fmt::format("device slot {}: owner {} does not point back", slot, owner));
      }
    } else if (!device_pool_.is_free(slot) && dev_refs[size_t(slot)] == 0) {
      return Internal(fmt::format("device slot {}: leaked (not free, no holder, no owner)", slot));
    }
  }
  for (int32_t slot = 0; slot < host_pool_.capacity(); ++slot) {
    if (host_pool_.refcount(slot) != host_refs[size_t(slot)]) {
      return Internal(fmt::format("host slot {}: refcount {} but {} holders", slot, host_pool_.refcount(slot),
                                  host_refs[size_t(slot)]));
    }
    const int32_t owner = host_owner_[size_t(slot)];
    if (owner >= 0) {
      if (host_pool_.is_free(slot)) return Internal(fmt::format("host slot {}: free but owned", slot));
      if (owner >= int32_t(index_.id_limit()) || !index_.at(uint32_t(owner)).live || index_.at(uint32_t(owner)).host != slot) {
        return Internal(fmt::format("host slot {}: owner {} does not point back", slot, owner));
      }
    } else if (!host_pool_.is_free(slot) && host_refs[size_t(slot)] == 0) {
      return Internal(fmt::format("host slot {}: leaked", slot));
    }
  }
  int64_t on_disk = 0, locks = 0;
  for (uint32_t id = 0; id < index_.id_limit(); ++id) {
    const IndexEntry& e = index_.at(id);
    if (!e.live) continue;
    locks += e.locks;
    if (e.on_disk && e.disk_writing) return Internal(fmt::format("entry {}: on disk and being written", id));
    if (e.disk_reads < 0 || (e.disk_reads > 0 && !e.on_disk)) return Internal(fmt::format("entry {}: disk reads without a file", id));
    on_disk += (e.on_disk || e.disk_writing) ? 1 : 0;
    if (e.device >= 0 && device_owner_[size_t(e.device)] != int32_t(id)) return Internal(fmt::format("entry {}: device slot not owned", id));
    if (e.host >= 0 && host_owner_[size_t(e.host)] != int32_t(id)) return Internal(fmt::format("entry {}: host slot not owned", id));
    if (e.device < 0 && e.host < 0 && !e.on_disk && !e.disk_writing && e.locks == 0) {
      return Internal(fmt::format("entry {}: no copy anywhere but still indexed", id));
    }
    if (!(ChainHash(e.parent, e.tokens) == e.hash)) return Internal(fmt::format("entry {}: hash does not chain from its parent", id));
    if (int64_t(e.tokens.size()) != page_) return Internal(fmt::format("entry {}: {} tokens", id, e.tokens.size()));
  }
  if (on_disk != disk_used_blocks_) {
    return Internal(fmt::format("disk tier: {} blocks counted, {} indexed", disk_used_blocks_, on_disk));
  }
  if (disk_enabled() && disk_used_blocks_ > disk_capacity_blocks_) return Internal("disk tier: over capacity");
  if (locks != match_locks_ + loading_locks) {
    return Internal(fmt::format("entry locks {} != match locks {} + load locks {}", locks, match_locks_, loading_locks));
  }
  return Status::Ok();
}

CacheCounters KvCacheManager::Impl::Counters() const {
  CacheCounters c = c_;
  const int64_t bb = int64_t(layout_.block_bytes());
  auto fill = [&](TierCounters& t, const BlockPool& pool, const std::vector<int32_t>& owner) {
    t.capacity_blocks = pool.capacity();
    t.used_blocks = pool.capacity() - pool.n_free();
    t.cached_blocks = 0;
    t.pinned_blocks = 0;
    for (int32_t s = 0; s < pool.capacity(); ++s) {
      t.cached_blocks += owner[size_t(s)] >= 0;
      t.pinned_blocks += pool.refcount(s) > 0;
    }
    t.used_bytes = t.used_blocks * bb;
    t.capacity_bytes = t.capacity_blocks * bb;
  };
  fill(c.device, device_pool_, device_owner_);
  fill(c.host, host_pool_, host_owner_);
  if (disk_) {
    const int64_t fb = int64_t(disk_->file_bytes());
    c.disk.capacity_blocks = disk_capacity_blocks_;
    c.disk.used_blocks = disk_used_blocks_;
    c.disk.cached_blocks = disk_used_blocks_;
    c.disk.used_bytes = disk_used_blocks_ * fb;
    c.disk.capacity_bytes = disk_capacity_blocks_ * fb;
  }
  c.index_entries = int64_t(index_.size());
  c.disk_writes_disabled = !disk_writes_ok_;
  return c;
}

std::string CacheCounters::Report() const {
  std::string out = fmt::format("kv cache: {} lookups, {} prompt tokens, {} reused ({:.1f}%), {} index entries\n", lookups,
                                lookup_tokens, reused_tokens, lookup_tokens ? 100.0 * double(reused_tokens) / double(lookup_tokens) : 0.0,
                                index_entries);
  auto line = [&](const char* name, const TierCounters& t) {
    out += fmt::format(
        "  {:<6} hits {} blk ({} tok)  misses {} blk  in {}  out {}  evict {}  promote {}  demote {}  errors {}  "
        "used {}/{} blk ({} cached, {} pinned)\n",
        name, t.hit_blocks, t.hit_tokens, t.miss_blocks, FormatBytes(uint64_t(t.bytes_in)), FormatBytes(uint64_t(t.bytes_out)),
        t.evictions, t.promotions, t.demotions, t.errors, t.used_blocks, t.capacity_blocks, t.cached_blocks,
        t.pinned_blocks);
  };
  line("device", device);
  line("host", host);
  line("disk", disk);
  if (skipped_short_hits || failed_loads || disk_writes_disabled) {
    out += fmt::format("  short hits skipped {}  failed loads {}  disk writes {}\n", skipped_short_hits, failed_loads,
                       disk_writes_disabled ? "STOPPED" : "on");
  }
  return out;
}

}  // namespace pg
