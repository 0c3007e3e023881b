// DiskTier: one file per KV block under a directory.
//
// Each file is a BlockRecord (block_record.h, which gives the byte layout)
// with the magic "PGKVBLK\0": header, tokens, payload. It is written to
// "<dir>/tmp/<hash>.<n>.part" and renamed to "<dir>/<hash[0:2]>/<hash>.kvb"
// so a crash never leaves a half block under a final name.
//
// DiskTier is the disk tier's BlockMedium: Read(b) loads and verifies b's
// file (a corrupt one is deleted), Write(b) stores it.
//
// Thread-safety: Write/Read/Remove may run concurrently on distinct hashes
// (mover threads); Scan runs alone at start. No in-memory index here: the
// manager's PrefixIndex records which blocks are on disk.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kv/index/block_hash.h"
#include "kv/kv_layout.h"
#include "kv/media/block_medium.h"
#include "kv/media/block_record.h"

namespace pg {

class DiskTier final : public BlockMedium {
 public:
  static constexpr uint32_t kFormatVersion = BlockRecord::kFormatVersion;
  static constexpr size_t kHeaderBytes = BlockRecord::kHeaderBytes;
  static constexpr BlockRecord::Magic kMagic = {'P', 'G', 'K', 'V', 'B', 'L', 'K', '\0'};

  // Creates dir (and its tmp/) when missing. Fails with a clear message when
  // the path exists but is not a directory or cannot be read. A directory
  // that cannot be written is accepted (reads still work; writes fail).
  static Result<std::unique_ptr<DiskTier>> Open(const std::string& dir, const KvLayout& layout,
                                                const std::string& model_identity);

  struct BlockInfo {
    BlockHash hash;
    BlockHash parent;
    int32_t depth = 0;
    std::vector<int32_t> tokens;
  };
  struct ScanResult {
    std::vector<BlockInfo> blocks;  // valid headers of this model and layout
    int64_t removed_bad = 0;        // corrupt / truncated files deleted
    int64_t removed_tmp = 0;        // leftover temporary files deleted
    int64_t foreign = 0;            // files of another model or layout, left alone
  };
  // Reads every block header (not payloads) and deletes damaged files; a
  // block's tokens must chain to its hash under `key` (KvCacheConfig::hash_key),
  // so blocks written under another fleet secret count as damaged.
  Result<ScanResult> Scan(const BlockHashKey& key = {});

  // Writes one block (tokens: page_tokens, data: block_bytes). Errors:
  // ResourceExhausted for a full disk / quota, IoError otherwise (EROFS, EACCES...).
  Status Write(const BlockInfo& info, const uint8_t* data);
  // Reads and verifies one block into dst (block_bytes). NotFound when the
  // file is gone; Corrupt when header, tokens, size or checksum disagree
  // (the caller then Remove()s it).
  Status Read(const BlockHash& hash, std::span<const int32_t> expect_tokens, uint8_t* dst);
  void Remove(const BlockHash& hash);

  // BlockMedium.
  Tier tier() const override { return kDiskTier; }
  Pinning pinning() const override { return Pinning::kFile; }
  uint64_t stored_bytes() const override { return file_bytes(); }
  Status Read(const BlockRef& b, uint8_t* dst) override;
  Status Write(const BlockRef& b, const uint8_t* src) override;

  // Bytes one block file takes (header + tokens + payload).
  uint64_t file_bytes() const { return record_.record_bytes(); }
  std::string PathFor(const BlockHash& hash) const;
  const std::string& dir() const { return dir_; }

 private:
  DiskTier(std::string dir, const KvLayout& layout, const BlockHash& model_hash);

  std::string dir_;
  KvLayout layout_;
  BlockRecord record_;
};

}  // namespace pg
