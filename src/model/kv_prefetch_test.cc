// Which keys the tiled attention kernels prefetch, and that walking them reads
// nothing past a sequence's block table (an exact-size table: ASan in CI).
#include "model/kv_prefetch.h"

#include <gtest/gtest.h>

#include <vector>

#include "model/test_attention_fixture.h"

namespace pg {
namespace {

TEST(KvPrefetch, TilesAheadCoverEveryKeyOnceAndStopAtTheEnd) {
  constexpr int64_t kT = kAttentionTileKeys;
  for (int64_t n : {1, 31, 32, 33, 100, 160, 161, 1000}) {
    std::vector<int> seen(static_cast<size_t>(n), 0);
    for (int64_t j0 = 0; j0 < n; j0 += kT) {
      const auto [from, to] = TilesAhead(j0, n);
      EXPECT_LE(from, to);
      EXPECT_LE(to, n);
      if (from < to) {
        EXPECT_GE(from, j0) << "never behind the tile being computed";
      }
      for (int64_t j = from; j < to; ++j) ++seen[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(seen[static_cast<size_t>(j)], 1) << "n " << n << " key " << j;
  }
  EXPECT_EQ(TilesAhead(0, 1000), (std::pair<int64_t, int64_t>{0, (kPrefetchTiles + 1) * kT}));
  EXPECT_EQ(TilesAhead(kT, 1000), (std::pair<int64_t, int64_t>{(kPrefetchTiles + 1) * kT, (kPrefetchTiles + 2) * kT}));
}

TEST(KvPrefetch, PrefetchWalksOnlyTheSequencesBlocks) {
  for (int64_t page : {16, 7})
    for (int64_t n : {1, 33, 300}) {
      AttentionFixture f(64, 2, n, page, KvDtype::kF16, 5, 1.0f, 1);
      const std::vector<int32_t> exact(f.table.begin(), f.table.end());  // allocated to size: no slack to read
      ASSERT_EQ(static_cast<int64_t>(exact.size()), (n + page - 1) / page);
      for (int64_t head : {0, 1}) {
        AttentionArgs a = f.args;
        a.block_table = exact.data();
        a.kv_head = head;
        for (int64_t j0 = 0; j0 < n; j0 += kAttentionTileKeys) PrefetchTilesAhead(a, j0, n);
        PrefetchKeys(a, 0, n);
      }
    }
}

}  // namespace
}  // namespace pg
