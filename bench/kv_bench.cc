// kv_bench: microbenchmarks of the tiered KV cache (src/kv). Prints figures,
// asserts nothing.
//
//   kv_bench [--index-blocks N] [--dir PATH] [--block-mib X]
//
//   1. prefix lookup latency with N (default 1M) blocks in the index;
//   2. device<->host demotion / promotion through KvCacheManager, next to memcpy;
//   3. disk tier write and read GB/s (cold reads after posix_fadvise DONTNEED);
//   4. zstd on f16 KV-like data (does compression pay off?).
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "base/units.h"
#include "kv/index/block_hash.h"
#include "kv/index/prefix_index.h"
#include "kv/kv_cache_manager.h"
#include "kv/media/disk_tier.h"

namespace pg {
namespace {

struct Args {
  int64_t index_blocks = 1'000'000;
  std::string dir = "/tmp/kv_bench_disk";
};

uint16_t F32ToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = (x >> 13) & 0x3ff;
  if (exp <= 0) return uint16_t(sign);
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  return uint16_t(sign | uint32_t(exp) << 10 | mant);
}

// KV-like block contents: Gaussian values with per-channel scales, as f16.
void FillKvLike(uint8_t* dst, size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  auto* h = reinterpret_cast<uint16_t*>(dst);
  for (size_t i = 0; i < bytes / 2; ++i) h[i] = F32ToF16(n(rng) * (0.25f + float(i % 128) / 64.f));
}

// ------------------------------------------------------------ 1. lookup
void BenchLookup(const Args& a) {
  constexpr int kPage = 16;
  constexpr int kConvBlocks = 128;  // 2048-token conversations
  const int64_t n_convs = std::max<int64_t>(1, a.index_blocks / kConvBlocks);
  PrefixIndex idx;
  const BlockHash root = RootHash("bench-model", "");
  std::vector<std::vector<int32_t>> convs;
  const double t0 = NowSeconds();
  for (int64_t c = 0; c < n_convs; ++c) {
    std::vector<int32_t> toks(kConvBlocks * kPage);
    for (size_t i = 0; i < toks.size(); ++i) toks[i] = int32_t((c * 1000003 + int64_t(i) * 7919) % 151000);
    BlockHash h = root;
    for (int b = 0; b < kConvBlocks; ++b) {
      std::span<const int32_t> blk(toks.data() + b * kPage, kPage);
      const BlockHash nh = ChainHash(h, blk);
      idx.Insert(nh, h, b, blk);
      h = nh;
    }
    if (c % (n_convs / 16 + 1) == 0) convs.push_back(std::move(toks));
  }
  const double t_build = NowSeconds() - t0;
  std::printf(
      "prefix index: %zu blocks (%lld conversations x %d blocks of %d tokens), built in %.2f s (%.2f us/block)\n",
      idx.size(), (long long)n_convs, kConvBlocks, kPage, t_build, 1e6 * t_build / double(idx.size()));

  std::vector<uint32_t> out;
  out.reserve(kConvBlocks);
  // Full hit: a 2048-token prompt, all 128 blocks found.
  const int reps = 2000;
  double t = NowSeconds();
  size_t found = 0;
  for (int r = 0; r < reps; ++r) {
    out.clear();
    idx.MatchChain(root, convs[size_t(r) % convs.size()], kPage, kConvBlocks, BlockHashKey{}, &out);
    found += out.size();
  }
  double dt = (NowSeconds() - t) / reps;
  std::printf("  lookup, full hit of 2048 tokens (128 blocks): %.1f us per prompt, %.0f ns per block (found %zu/%d)\n",
              dt * 1e6, dt * 1e9 / kConvBlocks, found / reps, kConvBlocks);
  // Miss on the first block.
  std::vector<int32_t> stranger(kConvBlocks * kPage, 42);
  t = NowSeconds();
  for (int r = 0; r < 100000; ++r) {
    out.clear();
    stranger[0] = r;
    idx.MatchChain(root, stranger, kPage, kConvBlocks, BlockHashKey{}, &out);
  }
  dt = (NowSeconds() - t) / 100000;
  std::printf("  lookup, miss at block 0: %.2f us per prompt\n", dt * 1e6);
  // Hashing alone (SHA-256 of 32 + 64 bytes), the floor of the per-block cost.
  t = NowSeconds();
  BlockHash h = root;
  for (int r = 0; r < 200000; ++r) h = ChainHash(h, std::span<const int32_t>(convs[0].data(), kPage));
  dt = (NowSeconds() - t) / 200000;
  std::printf("  chained SHA-256 per block alone: %.0f ns (%02x)\n", dt * 1e9, h.bytes[0]);
}

// ------------------------------------------------------------ 2. promote / demote
double MemcpyGBs(size_t bytes) {
  std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);  // touch
  const int reps = 5;
  const double t = NowSeconds();
  for (int r = 0; r < reps; ++r) {
    a[size_t(r)] = uint8_t(r);
    std::memcpy(b.data(), a.data(), bytes);
  }
  return double(bytes) * reps / (NowSeconds() - t) / 1e9;
}

void BenchMoves(const Args& a) {
  // A 1B-class model: 16 layers, 8 KV heads of 64, 16-token pages, f16 => 512 KiB blocks.
  const KvLayout layout{16, 8, 64, 16, KvDtype::kF16};
  const size_t bb = layout.block_bytes();
  const int n = 128;  // blocks per sequence (2048 tokens)
  std::printf("\nblock moves: layout %s, block %s, %d blocks (%s) per sequence\n", layout.ToString().c_str(),
              FormatBytes(bb).c_str(), n, FormatBytes(bb * n).c_str());
  std::printf("  plain memcpy, one thread: %.2f GB/s\n", MemcpyGBs(bb * n));
  for (int threads : {1, 2, 4}) {
    for (WritePolicy wp : {WritePolicy::kWriteBack, WritePolicy::kWriteThrough}) {
      KvCacheConfig c =
          KvCacheConfig::Optimized(layout, "bench", uint64_t(n + 1) * bb, uint64_t(2 * n + 8) * bb, "", 0);
      c.write_policy = wp;
      c.io_threads = threads;
      auto kv = KvCacheManager::Create(c).value();
      auto run_seq = [&](SeqId id, int conv) {
        std::vector<int32_t> toks(size_t(n) * 16 + 1);
        for (size_t i = 0; i < toks.size(); ++i) toks[i] = int32_t(conv * 100000 + int(i));
        std::vector<BlockId> table;
        PrefixMatch m = kv->Match(toks, {});
        const double t0 = NowSeconds();
        if (!kv->AllocateSequence(id, std::move(m), int64_t(toks.size()), &table).ok()) std::abort();
        const double t_alloc = NowSeconds() - t0;
        while (!kv->PromotionReady(id, &table)) {
        }
        const double t_ready = NowSeconds() - t0;
        const int64_t cached = kv->CachedTokens(id);
        for (size_t b = size_t(cached / 16); b < size_t(n); ++b) {
          std::memset(kv->DeviceBlockPtr(table[b]), int(b), bb);
          kv->CommitFullBlock(id, int(b), std::span<const int32_t>(toks).subspan(b * 16, 16));
        }
        kv->FreeSequence(id);
        return std::make_pair(t_alloc, t_ready);
      };
      // Round 0 touches the arenas' pages (first-touch page faults are not a copy cost);
      // round 1 is measured.
      double t_demote = 0, t_alloc = 0, t_promote = 0;
      int64_t promotions = 0;
      for (int round = 0; round < 2; ++round) {
        const int conv = 10 * round;
        run_seq(1 + conv, 1 + conv);
        kv->WaitIdle();
        // Sequence 2 needs the whole device tier: sequence 1's blocks are demoted to host
        // (write-back: copied now; write-through: already copied, just dropped).
        t_demote = run_seq(2 + conv, 2 + conv).first;
        kv->WaitIdle();
        // Sequence 1 returns: all blocks but the last come back from host.
        const int64_t before = kv->counters().tiers[kHostTier].promotions;
        std::tie(t_alloc, t_promote) = run_seq(3 + conv, 1 + conv);
        promotions = kv->counters().tiers[kHostTier].promotions - before;
        kv->WaitIdle();
      }
      // Write-back copies on eviction (GB/s of the copy); write-through copied at commit time,
      // so its eviction only drops device copies (time shown instead).
      char evict[96];
      if (wp == WritePolicy::kWriteBack) {
        std::snprintf(evict, sizeof(evict), "evict+demote %3d blocks: %6.2f GB/s", n, double(bb) * n / t_demote / 1e9);
      } else {
        std::snprintf(evict, sizeof(evict), "evict %3d clean blocks: %6.2f ms  ", n, t_demote * 1e3);
      }
      std::printf(
          "  io_threads=%d %-13s %s | promote %3d blocks: %6.2f GB/s (AllocateSequence returns after %.2f ms)\n",
          threads, WritePolicyName(wp), evict, int(promotions), double(bb) * double(promotions) / t_promote / 1e9,
          t_alloc * 1e3);
    }
  }
}

// ------------------------------------------------------------ 3. disk
void BenchDisk(const Args& a) {
  const KvLayout layout{16, 8, 64, 16, KvDtype::kF16};
  std::filesystem::remove_all(a.dir);
  auto disk = DiskTier::Open(a.dir, layout, "bench").value();
  const int n = 256;
  std::vector<uint8_t> data(layout.block_bytes());
  FillKvLike(data.data(), data.size(), 1);
  std::vector<DiskTier::BlockInfo> infos(n);
  const BlockHash root = RootHash("bench", "");
  BlockHash h = root;
  for (int i = 0; i < n; ++i) {
    infos[size_t(i)].tokens.assign(16, i);
    infos[size_t(i)].parent = h;
    infos[size_t(i)].depth = i;
    h = infos[size_t(i)].hash = ChainHash(h, infos[size_t(i)].tokens);
  }
  double t = NowSeconds();
  for (int i = 0; i < n; ++i) {
    Status st = disk->Write(infos[size_t(i)], data.data());
    if (!st.ok()) {
      std::printf("disk write failed: %s\n", st.ToString().c_str());
      return;
    }
  }
  const double t_write = NowSeconds() - t;
  const double total = double(disk->file_bytes()) * n;
  std::printf("\ndisk tier (%s): %d files of %s\n", a.dir.c_str(), n, FormatBytes(disk->file_bytes()).c_str());
  std::printf("  write (temp file + rename, page cache, no fsync): %.2f GB/s, %.0f us per block\n",
              total / t_write / 1e9, t_write / n * 1e6);
  t = NowSeconds();
  for (int i = 0; i < n; ++i)
    if (!disk->Read(infos[size_t(i)].hash, infos[size_t(i)].tokens, data.data()).ok()) std::abort();
  const double t_warm = NowSeconds() - t;
  std::printf("  read + verify (warm page cache): %.2f GB/s, %.0f us per block\n", total / t_warm / 1e9,
              t_warm / n * 1e6);
  for (int i = 0; i < n; ++i) {
    const int fd = ::open(disk->PathFor(infos[size_t(i)].hash).c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fdatasync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
  }
  t = NowSeconds();
  for (int i = 0; i < n; ++i)
    if (!disk->Read(infos[size_t(i)].hash, infos[size_t(i)].tokens, data.data()).ok()) std::abort();
  const double t_cold = NowSeconds() - t;
  std::printf("  read + verify (after fadvise DONTNEED): %.2f GB/s, %.0f us per block\n", total / t_cold / 1e9,
              t_cold / n * 1e6);
  std::filesystem::remove_all(a.dir);
}

// ------------------------------------------------------------ 4. compression
void BenchCompression() {
  const size_t bytes = 512 * 1024;
  std::vector<uint8_t> data(bytes), out(ZSTD_compressBound(bytes)), back(bytes);
  FillKvLike(data.data(), bytes, 7);
  std::printf("\nzstd on %s of Gaussian f16 (KV-like) data:\n", FormatBytes(bytes).c_str());
  for (int level : {1, 3}) {
    const int reps = 10;
    double t = NowSeconds();
    size_t csize = 0;
    for (int r = 0; r < reps; ++r) csize = ZSTD_compress(out.data(), out.size(), data.data(), bytes, level);
    const double tc = (NowSeconds() - t) / reps;
    t = NowSeconds();
    for (int r = 0; r < reps; ++r) ZSTD_decompress(back.data(), bytes, out.data(), csize);
    const double td = (NowSeconds() - t) / reps;
    std::printf("  level %d: ratio %.3f, compress %.2f GB/s, decompress %.2f GB/s\n", level,
                double(bytes) / double(csize), bytes / tc / 1e9, bytes / td / 1e9);
  }
}

}  // namespace
}  // namespace pg

int main(int argc, char** argv) {
  pg::Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--index-blocks" && i + 1 < argc) {
      a.index_blocks = std::atoll(argv[++i]);
    } else if (s == "--dir" && i + 1 < argc) {
      a.dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: kv_bench [--index-blocks N] [--dir PATH]\n");
      return 2;
    }
  }
  if (a.index_blocks < 128) {
    std::fprintf(stderr, "kv_bench: --index-blocks must be >= 128\n");
    return 2;
  }
  pg::BenchLookup(a);
  pg::BenchMoves(a);
  pg::BenchDisk(a);
  pg::BenchCompression();
  return 0;
}
