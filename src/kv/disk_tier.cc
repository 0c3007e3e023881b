#include "kv/disk_tier.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/check.h"

namespace pg {

namespace {

constexpr char kMagic[8] = {'P', 'G', 'K', 'V', 'B', 'L', 'K', '\0'};
constexpr size_t kChecksumOffset = 144;
constexpr size_t kHeaderChecksumOffset = 152;

void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t GetU32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
uint64_t GetU64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

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

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

DiskTier::DiskTier(std::string dir, const KvLayout& layout, const BlockHash& model_hash)
    : dir_(std::move(dir)), layout_(layout), model_hash_(model_hash) {
  file_bytes_ = kHeaderBytes + 4 * uint64_t(layout.page_tokens) + layout.block_bytes();
}

Result<std::unique_ptr<DiskTier>> DiskTier::Open(const std::string& dir, const KvLayout& layout,
                                                 const std::string& model_identity) {
  PG_RETURN_IF_ERROR(layout.Validate());
  if (dir.empty()) return InvalidArgument("kv disk dir: empty path");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) return InvalidArgument(fmt::format("kv disk dir {}: not a directory", dir));
  } else if (!std::filesystem::create_directories(dir, ec) && ec) {
    return IoError(fmt::format("kv disk dir {}: cannot create: {}", dir, ec.message()));
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return IoError(fmt::format("kv disk dir {}: cannot read: {}", dir, std::strerror(errno)));
  }
  // tmp/ may fail to appear on a read-only directory; writes then fail later.
  std::filesystem::create_directory(std::filesystem::path(dir) / "tmp", ec);
  return std::unique_ptr<DiskTier>(new DiskTier(dir, layout, ModelIdentityHash(model_identity)));
}

std::string DiskTier::PathFor(const BlockHash& hash) const {
  const std::string hex = hash.Hex();
  return fmt::format("{}/{}/{}.kvb", dir_, hex.substr(0, 2), hex);
}

void DiskTier::EncodeHeader(const BlockInfo& info, uint64_t checksum, uint8_t* h) const {
  std::memset(h, 0, kHeaderBytes);
  std::memcpy(h, kMagic, 8);
  PutU32(h + 8, kFormatVersion);
  PutU32(h + 12, uint32_t(kHeaderBytes));
  std::memcpy(h + 16, model_hash_.bytes.data(), 32);
  std::memcpy(h + 48, info.hash.bytes.data(), 32);
  std::memcpy(h + 80, info.parent.bytes.data(), 32);
  PutU32(h + 112, uint32_t(info.depth));
  PutU32(h + 116, uint32_t(layout_.page_tokens));
  PutU32(h + 120, uint32_t(layout_.n_layers));
  PutU32(h + 124, uint32_t(layout_.n_kv_heads));
  PutU32(h + 128, uint32_t(layout_.head_dim));
  PutU32(h + 132, uint32_t(layout_.dtype));
  PutU64(h + 136, layout_.block_bytes());
  PutU64(h + kChecksumOffset, checksum);
  PutU64(h + kHeaderChecksumOffset, XXH3_64bits(h, kHeaderChecksumOffset));
}

Status DiskTier::Write(const BlockInfo& info, const uint8_t* data) {
  PG_CHECK(info.tokens.size() == size_t(layout_.page_tokens));
  const size_t token_bytes = 4 * info.tokens.size();
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, info.tokens.data(), token_bytes);
  XXH3_64bits_update(&st, data, layout_.block_bytes());
  uint8_t header[kHeaderBytes];
  EncodeHeader(info, XXH3_64bits_digest(&st), header);

  const std::string final_path = PathFor(info.hash);
  const std::string tmp_path = fmt::format("{}/tmp/{}.{}.part", dir_, info.hash.Hex(), g_tmp_counter.fetch_add(1));
  const std::string sub = final_path.substr(0, final_path.rfind('/'));
  if (::mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) {
    const int err = errno;
    if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(fmt::format("{}: {}", sub, std::strerror(err)));
    return IoError(fmt::format("{}: {}", sub, std::strerror(err)));
  }
  Fd f;
  f.fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(fmt::format("{}: {}", tmp_path, std::strerror(err)));
    return IoError(fmt::format("{}: {}", tmp_path, std::strerror(err)));
  }
  Status st1 = WriteFull(f.fd, header, kHeaderBytes, tmp_path);
  if (st1.ok()) st1 = WriteFull(f.fd, reinterpret_cast<const uint8_t*>(info.tokens.data()), token_bytes, tmp_path);
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
  if (uint64_t(sb.st_size) != file_bytes_) {
    return Corrupt(fmt::format("{}: size {} != {}", path, uint64_t(sb.st_size), file_bytes_));
  }
  const size_t token_bytes = 4 * size_t(layout_.page_tokens);
  uint8_t head[kHeaderBytes];
  std::vector<int32_t> tokens(size_t(layout_.page_tokens));
  if (PreadFull(f.fd, head, kHeaderBytes, 0) != ssize_t(kHeaderBytes) ||
      PreadFull(f.fd, reinterpret_cast<uint8_t*>(tokens.data()), token_bytes, kHeaderBytes) != ssize_t(token_bytes) ||
      PreadFull(f.fd, dst, layout_.block_bytes(), off_t(kHeaderBytes + token_bytes)) != ssize_t(layout_.block_bytes())) {
    return Corrupt(fmt::format("{}: short read", path));
  }
  BlockInfo expect;
  expect.hash = hash;
  uint8_t want[kHeaderBytes];
  // Compare the header field by field through a re-encoding of what we expect.
  if (std::memcmp(head, kMagic, 8) != 0 || GetU64(head + kHeaderChecksumOffset) != XXH3_64bits(head, kHeaderChecksumOffset)) {
    return Corrupt(fmt::format("{}: bad header", path));
  }
  std::memcpy(expect.parent.bytes.data(), head + 80, 32);
  expect.depth = int32_t(GetU32(head + 112));
  expect.tokens.assign(expect_tokens.begin(), expect_tokens.end());
  if (expect.tokens.size() != size_t(layout_.page_tokens)) return Corrupt(fmt::format("{}: token count", path));
  EncodeHeader(expect, GetU64(head + kChecksumOffset), want);
  if (std::memcmp(head, want, kHeaderBytes) != 0) return Corrupt(fmt::format("{}: header does not match the block", path));
  if (std::memcmp(tokens.data(), expect_tokens.data(), token_bytes) != 0) {
    return Corrupt(fmt::format("{}: tokens differ", path));
  }
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, tokens.data(), token_bytes);
  XXH3_64bits_update(&st, dst, layout_.block_bytes());
  if (XXH3_64bits_digest(&st) != GetU64(head + kChecksumOffset)) return Corrupt(fmt::format("{}: checksum mismatch", path));
  return Status::Ok();
}

void DiskTier::Remove(const BlockHash& hash) { ::unlink(PathFor(hash).c_str()); }

Result<DiskTier::ScanResult> DiskTier::Scan() {
  namespace fs = std::filesystem;
  ScanResult out;
  std::error_code ec;
  // Leftover temporaries from a crash.
  for (fs::directory_iterator it(fs::path(dir_) / "tmp", ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::remove(it->path(), ec)) ++out.removed_tmp;
  }
  ec.clear();
  const size_t token_bytes = 4 * size_t(layout_.page_tokens);
  std::vector<uint8_t> buf(kHeaderBytes + token_bytes);
  for (fs::recursive_directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".kvb") continue;
    const std::string path = it->path().string();
    auto bad = [&] {
      std::error_code rm_ec;
      if (fs::remove(path, rm_ec)) ++out.removed_bad;
    };
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) continue;
    const ssize_t n = PreadFull(f.fd, buf.data(), kHeaderBytes, 0);
    const uint8_t* h = buf.data();
    if (n != ssize_t(kHeaderBytes) || std::memcmp(h, kMagic, 8) != 0 ||
        GetU64(h + kHeaderChecksumOffset) != XXH3_64bits(h, kHeaderChecksumOffset)) {
      bad();
      continue;
    }
    BlockHash model;
    std::memcpy(model.bytes.data(), h + 16, 32);
    const bool same_layout = GetU32(h + 8) == kFormatVersion && GetU32(h + 116) == uint32_t(layout_.page_tokens) &&
                             GetU32(h + 120) == uint32_t(layout_.n_layers) &&
                             GetU32(h + 124) == uint32_t(layout_.n_kv_heads) &&
                             GetU32(h + 128) == uint32_t(layout_.head_dim) &&
                             GetU32(h + 132) == uint32_t(layout_.dtype) && GetU64(h + 136) == layout_.block_bytes();
    if (!(model == model_hash_) || !same_layout) {
      ++out.foreign;
      continue;
    }
    BlockInfo info;
    std::memcpy(info.hash.bytes.data(), h + 48, 32);
    std::memcpy(info.parent.bytes.data(), h + 80, 32);
    info.depth = int32_t(GetU32(h + 112));
    info.tokens.resize(size_t(layout_.page_tokens));
    struct stat sb;
    if (::fstat(f.fd, &sb) != 0 || uint64_t(sb.st_size) != file_bytes_ ||
        PreadFull(f.fd, reinterpret_cast<uint8_t*>(info.tokens.data()), token_bytes, kHeaderBytes) !=
            ssize_t(token_bytes) ||
        !(ChainHash(info.parent, info.tokens) == info.hash) || it->path().stem().string() != info.hash.Hex() ||
        info.depth < 0) {
      bad();
      continue;
    }
    out.blocks.push_back(std::move(info));
  }
  if (ec) return IoError(fmt::format("kv disk dir {}: scan: {}", dir_, ec.message()));
  return out;
}

}  // namespace pg
