// DiskTier: one file per KV block under a directory.
//
// File layout (little-endian), written to "<dir>/tmp/<hash>.<n>.part" and
// renamed to "<dir>/<hash[0:2]>/<hash>.kvb" so a crash never leaves a half
// block under a final name:
//
//   offset  size            field
//   0       8               magic "PGKVBLK\0"
//   8       4               format version (1)
//   12      4               header bytes (kHeaderBytes)
//   16      32              SHA-256 of the model identity
//   48      32              block hash (chained, block_hash.h)
//   80      32              parent hash
//   112     4               depth (block index in its sequence)
//   116     4               token count (= page_tokens)
//   120     4 x 4           n_layers, n_kv_heads, head_dim, dtype
//   136     8               payload bytes (= block_bytes)
//   144     8               XXH3-64 of tokens + payload
//   152     8               XXH3-64 of bytes [0, 152)
//   160     4 x tokens      tokens (int32)
//   ...     payload bytes   the block, as laid out by KvLayout
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
#include "kv/block_hash.h"
#include "kv/kv_layout.h"

namespace pg {

class DiskTier {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 160;

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
  // Reads every block header (not payloads) and deletes damaged files.
  Result<ScanResult> Scan();

  // Writes one block (tokens: page_tokens, data: block_bytes). Errors:
  // ResourceExhausted for a full disk / quota, IoError otherwise (EROFS, EACCES...).
  Status Write(const BlockInfo& info, const uint8_t* data);
  // Reads and verifies one block into dst (block_bytes). NotFound when the
  // file is gone; Corrupt when header, tokens, size or checksum disagree
  // (the caller then Remove()s it).
  Status Read(const BlockHash& hash, std::span<const int32_t> expect_tokens, uint8_t* dst);
  void Remove(const BlockHash& hash);

  // Bytes one block file takes (header + tokens + payload).
  uint64_t file_bytes() const { return file_bytes_; }
  std::string PathFor(const BlockHash& hash) const;
  const std::string& dir() const { return dir_; }

 private:
  DiskTier(std::string dir, const KvLayout& layout, const BlockHash& model_hash);
  void EncodeHeader(const BlockInfo& info, uint64_t checksum, uint8_t* out) const;

  std::string dir_;
  KvLayout layout_;
  BlockHash model_hash_;
  uint64_t file_bytes_;
};

}  // namespace pg
