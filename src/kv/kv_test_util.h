// Helpers shared by the src/kv tests (header-only; not used by the library).
// Thread-safety: none.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/index/block_hash.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_manager_impl.h"
#include "kv/kv_layout.h"

namespace pg {

// The verbs of KvCacheManager that only tests call reach its parts here.
struct KvCacheManager::TestAccess {
  static Impl& impl(KvCacheManager& kv) { return *kv.impl_; }
};

}  // namespace pg

namespace pg::kvtest {

// Policy hook (quotas, fair share): keeps at most max_tokens of the match
// (whole blocks), unlocking the rest; the dropped blocks are recomputed and
// their tokens count as miss reason `policy`. Call before ExplainMisses.
inline void LimitMatch(KvCacheManager& kv, PrefixMatch* match, int64_t max_tokens) {
  KvCacheManager::TestAccess::impl(kv).LimitMatch(match, max_tokens);
}

// True when block h left the cache entirely because a session quota evicted
// it (a bounded memory of recent ones): a later miss on it is a policy miss.
inline bool DroppedByPolicy(KvCacheManager& kv, const BlockHash& h) {
  return KvCacheManager::TestAccess::impl(kv).hints().DroppedByPolicy(h);
}

// Waits (at most timeout_s) until the remote tier's queued writes are stored.
inline bool DrainRemoteWrites(KvCacheManager& kv, double timeout_s) {
  return KvCacheManager::TestAccess::impl(kv).remote().DrainWrites(timeout_s);
}

// A small layout: 2 layers, 2 KV heads, head_dim 8, 4 tokens per page (512 B blocks).
inline KvLayout SmallLayout() { return KvLayout{2, 2, 8, 4, KvDtype::kF16}; }

inline constexpr const char* kModel = "test-model";
inline constexpr uint64_t kBlock = 512;  // SmallLayout().block_bytes()

// A manager for config c (nullptr and a test failure when Create fails).
inline std::unique_ptr<KvCacheManager> Make(KvCacheConfig c) {
  auto m = KvCacheManager::Create(std::move(c));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

// Device, host and disk tiers of the given sizes in blocks (the disk in block files).
inline KvCacheConfig Tiered(int64_t dev, int64_t host, const std::string& dir, int64_t disk_blocks) {
  const uint64_t file_bytes = 160 + 4 * 4 + kBlock;
  return KvCacheConfig::Optimized(SmallLayout(), kModel, uint64_t(dev) * kBlock, uint64_t(host) * kBlock, dir,
                                  uint64_t(disk_blocks) * file_bytes);
}

// The bytes a forward pass would write into a block: a deterministic pattern
// derived from the block's chained hash, i.e. from all tokens up to its end.
inline void FillPattern(const BlockHash& h, uint8_t* dst, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) dst[i] = uint8_t(h.bytes[i % 32] ^ (i * 131u) ^ (i >> 5));
}

inline bool HasPattern(const BlockHash& h, const uint8_t* p, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    if (p[i] != uint8_t(h.bytes[i % 32] ^ (i * 131u) ^ (i >> 5))) return false;
  return true;
}

// Chained hashes of every full block of `tokens`.
inline std::vector<BlockHash> ChainOf(const BlockHash& root, std::span<const int32_t> tokens, int page) {
  std::vector<BlockHash> out;
  BlockHash h = root;
  for (size_t b = 0; b + size_t(page) <= tokens.size(); b += size_t(page)) {
    h = ChainHash(h, tokens.subspan(b, size_t(page)));
    out.push_back(h);
  }
  return out;
}

// A fresh directory, removed with its contents at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "pgkv-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace pg::kvtest

#include <unordered_map>

namespace pg::kvtest {

// Plays the engine's part against a KvCacheManager: the "forward pass"
// writes FillPattern(block hash) into each block once it is full, and every
// reused block is checked to hold exactly that pattern.
class FakeEngine {
 public:
  FakeEngine(KvCacheManager& kv, std::string model_identity) : kv_(kv), model_(std::move(model_identity)) {}

  // Match + allocate. False (nothing held) when the device tier has no room.
  bool Start(SeqId id, const std::vector<int32_t>& tokens, const CacheRequest& req = {}) {
    PrefixMatch m = kv_.Match(tokens, req);
    if (!kv_.CanAllocate(kv_.BlocksNeeded(m, int64_t(tokens.size())))) return false;
    Seq s;
    s.tokens = tokens;
    s.root = RootHash(model_, req.salt);
    s.matched = m.tokens();
    Status st = kv_.AllocateSequence(id, std::move(m), int64_t(tokens.size()), &s.table);
    if (!st.ok()) return false;
    seqs_[id] = std::move(s);
    return true;
  }

  // Waits for promotions, checks reused blocks, "computes" the rest of the prompt.
  // Returns false while loads are still in flight.
  bool Prefill(SeqId id) {
    Seq& s = seqs_.at(id);
    if (!kv_.PromotionReady(id, &s.table)) return false;
    const int page = kv_.page_tokens();
    const int64_t cached = kv_.CachedTokens(id);
    if (cached % page != 0 || cached > s.matched || cached >= int64_t(s.tokens.size())) ++bad_;
    auto chain = ChainOf(s.root, s.tokens, page);
    const size_t bb = kv_.layout().block_bytes();
    for (int64_t b = 0; b < cached / page; ++b) {
      if (!HasPattern(chain[size_t(b)], kv_.DeviceBlockPtr(s.table[size_t(b)]), bb)) ++bad_;
      ++checked_;
    }
    for (size_t b = size_t(cached / page); b < chain.size(); ++b) {
      FillPattern(chain[b], kv_.DeviceBlockPtr(s.table[b]), bb);
      kv_.CommitFullBlock(id, int(b), std::span<const int32_t>(s.tokens).subspan(b * size_t(page), size_t(page)));
    }
    s.reuse = kv_.Reuse(id);
    s.cached = cached;
    return true;
  }

  // Appends one generated token. False when the device tier has no room.
  bool Decode(SeqId id, int32_t token) {
    Seq& s = seqs_.at(id);
    if (!kv_.CanAppend(id, 1)) return false;
    if (!kv_.Append(id, 1, &s.table).ok()) return false;
    s.tokens.push_back(token);
    const int page = kv_.page_tokens();
    if (s.tokens.size() % size_t(page) == 0) {
      const size_t b = s.tokens.size() / size_t(page) - 1;
      auto chain = ChainOf(s.root, s.tokens, page);
      FillPattern(chain[b], kv_.DeviceBlockPtr(s.table[b]), kv_.layout().block_bytes());
      kv_.CommitFullBlock(id, int(b), std::span<const int32_t>(s.tokens).subspan(b * size_t(page), size_t(page)));
    }
    return true;
  }

  void Finish(SeqId id) {
    kv_.FreeSequence(id);
    seqs_.erase(id);
  }

  // Whole request, waiting for loads: returns reused tokens; appends answer tokens to *tokens.
  TierTokens Turn(SeqId id, std::vector<int32_t>* tokens, int n_gen, const CacheRequest& req = {}) {
    if (!Start(id, *tokens, req)) {
      ++bad_;
      return {};
    }
    while (!Prefill(id)) kv_.Tick();
    for (int i = 0; i < n_gen; ++i) {
      const int32_t t = int32_t((tokens->size() * 2654435761u + 12345u) % 50000u);
      if (!Decode(id, t)) break;
      tokens->push_back(t);
    }
    TierTokens r = seqs_.at(id).reuse;
    Finish(id);
    return r;
  }

  bool live(SeqId id) const { return seqs_.count(id) != 0; }
  int64_t cached(SeqId id) const { return seqs_.at(id).cached; }
  int64_t bad() const { return bad_; }          // wrong bytes or impossible cache lengths seen
  int64_t checked() const { return checked_; }  // reused blocks whose bytes were verified

 private:
  struct Seq {
    std::vector<int32_t> tokens;
    std::vector<BlockId> table;
    BlockHash root;
    int64_t matched = 0;
    int64_t cached = 0;
    TierTokens reuse;
  };
  KvCacheManager& kv_;
  std::string model_;
  std::unordered_map<SeqId, Seq> seqs_;
  int64_t bad_ = 0;
  int64_t checked_ = 0;
};

// Tokens of a synthetic conversation message.
inline std::vector<int32_t> Message(int conv, int turn, int n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = 1 + (conv * 7919 + turn * 104729 + i * 31) % 30000;
  return t;
}

// Opens n conversations Message(first + i, 0, len) as sequences 1..n, each
// generating n_gen tokens; `after_each` runs after every turn. Returns them.
inline std::vector<std::vector<int32_t>> OpenConversations(FakeEngine& eng, int n, int first, int len, int n_gen,
                                                           const std::function<void()>& after_each = {}) {
  std::vector<std::vector<int32_t>> convs;
  for (int i = 0; i < n; ++i) {
    convs.push_back(Message(first + i, 0, len));
    eng.Turn(i + 1, &convs.back(), n_gen);
    if (after_each) after_each();
  }
  return convs;
}

}  // namespace pg::kvtest
