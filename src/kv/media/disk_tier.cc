#include "kv/media/disk_tier.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pg {

namespace {

std::atomic<uint64_t> g_tmp_counter{0};

// Reads exactly n bytes at offset; returns bytes read (< n at end of file) or -1.
ssize_t PreadFull(int fd, uint8_t* buf, size_t n, off_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, buf + done, n - done, off + off_t(done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    done += size_t(r);
  }
  return ssize_t(done);
}

Status WriteFull(int fd, const uint8_t* buf, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::write(fd, buf + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(fmt::format("{}: {}", path, std::strerror(err)));
      return IoError(fmt::format("{}: {}", path, std::strerror(err)));
    }
    done += size_t(r);
  }
  return Status::Ok();
}

// The tier's files hold prompt tokens: its directories are 0700 and its
// files 0600, set with chmod after creation so no umask changes them.
constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;

// Creates `path` as a private directory; 0 when made or already there, else errno.
int MakePrivateDir(const std::string& path) {
  if (::mkdir(path.c_str(), kDirMode) != 0) return errno == EEXIST ? 0 : errno;
  return ::chmod(path.c_str(), kDirMode) == 0 ? 0 : errno;
}

// Each missing directory of `dir`, outermost first, as MakePrivateDir.
int MakePrivateDirs(const std::filesystem::path& dir) {
  std::filesystem::path prefix;
  for (const std::filesystem::path& part : dir) {
    prefix /= part;
    std::error_code ec;
    if (std::filesystem::exists(prefix, ec)) continue;
    if (int err = MakePrivateDir(prefix.string())) return err;
  }
  return 0;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

DiskTier::DiskTier(std::string dir, const KvLayout& layout, const BlockHash& model_hash)
    : dir_(std::move(dir)), layout_(layout), record_(kMagic, layout, model_hash) {}

Result<std::unique_ptr<DiskTier>> DiskTier::Open(const std::string& dir, const KvLayout& layout,
                                                 const std::string& model_identity) {
  PG_RETURN_IF_ERROR(layout.Validate());
  if (dir.empty()) return InvalidArgument("kv disk dir: empty path");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec))
      return InvalidArgument(fmt::format("kv disk dir {}: not a directory", dir));
  } else if (int err = MakePrivateDirs(dir)) {
    return IoError(fmt::format("kv disk dir {}: cannot create: {}", dir, std::strerror(err)));
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return IoError(fmt::format("kv disk dir {}: cannot read: {}", dir, std::strerror(errno)));
  }
  // tmp/ may fail to appear on a read-only directory; writes then fail later.
  MakePrivateDir((std::filesystem::path(dir) / "tmp").string());
  return std::unique_ptr<DiskTier>(new DiskTier(dir, layout, ModelIdentityHash(model_identity)));
}

std::string DiskTier::PathFor(const BlockHash& hash) const {
  const std::string hex = hash.Hex();
  return fmt::format("{}/{}/{}.kvb", dir_, hex.substr(0, 2), hex);
}

Status DiskTier::Write(const BlockInfo& info, const uint8_t* data) {
  uint8_t header[kHeaderBytes];
  record_.EncodeHeader(BlockRecordInfo{info.hash, info.parent, info.depth, info.tokens}, data, header);

  const std::string final_path = PathFor(info.hash);
  const std::string tmp_path = fmt::format("{}/tmp/{}.{}.part", dir_, info.hash.Hex(), g_tmp_counter.fetch_add(1));
  const std::string sub = final_path.substr(0, final_path.rfind('/'));
  if (const int err = MakePrivateDir(sub); err != 0) {
    if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(fmt::format("{}: {}", sub, std::strerror(err)));
    return IoError(fmt::format("{}: {}", sub, std::strerror(err)));
  }
  Fd f;
  f.fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kFileMode);
  if (f.fd < 0 || ::fchmod(f.fd, kFileMode) != 0) {
    const int err = errno;
    if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(fmt::format("{}: {}", tmp_path, std::strerror(err)));
    return IoError(fmt::format("{}: {}", tmp_path, std::strerror(err)));
  }
  Status st1 = WriteFull(f.fd, header, kHeaderBytes, tmp_path);
  if (st1.ok()) {
    st1 = WriteFull(f.fd, reinterpret_cast<const uint8_t*>(info.tokens.data()), record_.token_bytes(), tmp_path);
  }
  if (st1.ok()) st1 = WriteFull(f.fd, data, layout_.block_bytes(), tmp_path);
  if (st1.ok() && ::close(f.fd) != 0) st1 = IoError(fmt::format("{}: close: {}", tmp_path, std::strerror(errno)));
  f.fd = -1;
  if (st1.ok() && ::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    st1 = IoError(fmt::format("{}: rename: {}", final_path, std::strerror(errno)));
  }
  if (!st1.ok()) ::unlink(tmp_path.c_str());
  return st1;
}

Status DiskTier::Read(const BlockHash& hash, std::span<const int32_t> expect_tokens, uint8_t* dst) {
  const std::string path = PathFor(hash);
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    if (errno == ENOENT) return NotFound(fmt::format("{}: missing", path));
    return IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  struct stat sb;
  if (::fstat(f.fd, &sb) != 0) return IoError(fmt::format("{}: stat: {}", path, std::strerror(errno)));
  if (uint64_t(sb.st_size) != file_bytes()) {
    return Corrupt(fmt::format("{}: size {} != {}", path, uint64_t(sb.st_size), file_bytes()));
  }
  const size_t token_bytes = record_.token_bytes();
  uint8_t head[kHeaderBytes];
  std::vector<uint8_t> tokens(token_bytes);
  if (PreadFull(f.fd, head, kHeaderBytes, 0) != ssize_t(kHeaderBytes) ||
      PreadFull(f.fd, tokens.data(), token_bytes, kHeaderBytes) != ssize_t(token_bytes) ||
      PreadFull(f.fd, dst, layout_.block_bytes(), off_t(kHeaderBytes + token_bytes)) !=
          ssize_t(layout_.block_bytes())) {
    return Corrupt(fmt::format("{}: short read", path));
  }
  // The caller knows the block by hash and tokens only: parent and depth
  // come from the file (Verify checks the header is intact before trusting them).
  const BlockRecordInfo expect{hash, BlockRecord::ParentOf(head), BlockRecord::DepthOf(head), expect_tokens};
  const Status st = record_.Verify(head, tokens.data(), dst, expect);
  if (!st.ok()) return Corrupt(fmt::format("{}: {}", path, st.message()));
  return Status::Ok();
}

void DiskTier::Remove(const BlockHash& hash) { ::unlink(PathFor(hash).c_str()); }

namespace {

enum class ScanVerdict { kGood, kBad, kForeign, kUnreadable };

// Reads the header and tokens of one block file into *info. kBad for a
// damaged file (short, torn header, wrong size, tokens that do not chain to
// the hash under `key`, a name that is not the hash); kForeign for another
// model's or layout's intact block.
ScanVerdict ScanFile(const BlockRecord& record, uint64_t file_bytes, const std::filesystem::path& file,
                     const BlockHashKey& key, DiskTier::BlockInfo* info) {
  const std::string path = file.string();
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return ScanVerdict::kUnreadable;
  uint8_t h[BlockRecord::kHeaderBytes];
  if (PreadFull(f.fd, h, sizeof(h), 0) != ssize_t(sizeof(h)) || !record.CheckIntact(h).ok()) return ScanVerdict::kBad;
  if (!record.IsOfThisModelAndLayout(h)) return ScanVerdict::kForeign;
  info->hash = BlockRecord::HashOf(h);
  info->parent = BlockRecord::ParentOf(h);
  info->depth = BlockRecord::DepthOf(h);
  info->tokens.resize(record.token_bytes() / 4);
  struct stat sb;
  if (::fstat(f.fd, &sb) != 0 || uint64_t(sb.st_size) != file_bytes ||
      PreadFull(f.fd, reinterpret_cast<uint8_t*>(info->tokens.data()), record.token_bytes(), sizeof(h)) !=
          ssize_t(record.token_bytes()) ||
      !(ChainHash(info->parent, info->tokens, key) == info->hash) || file.stem().string() != info->hash.Hex() ||
      info->depth < 0) {
    return ScanVerdict::kBad;
  }
  return ScanVerdict::kGood;
}

}  // namespace

Result<DiskTier::ScanResult> DiskTier::Scan(const BlockHashKey& key) {
  namespace fs = std::filesystem;
  ScanResult out;
  std::error_code ec;
  // Leftover temporaries from a crash.
  for (fs::directory_iterator it(fs::path(dir_) / "tmp", ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::remove(it->path(), ec)) ++out.removed_tmp;
  }
  ec.clear();
  for (fs::recursive_directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".kvb") continue;
    BlockInfo info;
    switch (ScanFile(record_, file_bytes(), it->path(), key, &info)) {
      case ScanVerdict::kGood: out.blocks.push_back(std::move(info)); break;
      case ScanVerdict::kBad: {
        std::error_code rm_ec;
        if (fs::remove(it->path(), rm_ec)) ++out.removed_bad;
        break;
      }
      case ScanVerdict::kForeign: ++out.foreign; break;
      case ScanVerdict::kUnreadable: break;
    }
  }
  if (ec) return IoError(fmt::format("kv disk dir {}: scan: {}", dir_, ec.message()));
  return out;
}

Status DiskTier::Read(const BlockRef& b, uint8_t* dst) {
  Status st = Read(b.hash, b.tokens, dst);
  if (st.code() == StatusCode::kCorrupt) Remove(b.hash);
  return st;
}

Status DiskTier::Write(const BlockRef& b, const uint8_t* src) {
  return Write(BlockInfo{b.hash, b.parent, b.depth, b.tokens}, src);
}

}  // namespace pg
