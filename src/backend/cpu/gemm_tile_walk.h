// Private: the walk of a GEMM over register tiles, shared by the tiled
// kernels of every ISA (it holds no intrinsics). Weight rows [r0, r1) go in
// tiles of RM rows and tokens [t0, t1) in tiles of RN tokens; the last tile
// of each may be smaller. For every tile, at weight row r and token t,
//   tile.template operator()<rm, rn>(r, t)
// runs with the tile's actual size as template arguments (1 <= rm <= RM,
// 1 <= rn <= RN), so a kernel compiles one register tile per size.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pg {
namespace tile_walk_detail {

template <int M, int N, typename Tile>
inline void RunTokens(int rn, int64_t r, int64_t t, Tile& tile) {
  if constexpr (N > 0) {
    if (rn == N) return tile.template operator()<M, N>(r, t);
    RunTokens<M, N - 1>(rn, r, t, tile);
  }
}

template <int M, int N, typename Tile>
inline void RunRows(int rm, int rn, int64_t r, int64_t t, Tile& tile) {
  if constexpr (M > 0) {
    if (rm == M) return RunTokens<M, N>(rn, r, t, tile);
    RunRows<M - 1, N>(rm, rn, r, t, tile);
  }
}

}  // namespace tile_walk_detail

template <int RM, int RN, typename Tile>
inline void ForEachTile(int64_t r0, int64_t r1, int64_t t0, int64_t t1, Tile&& tile) {
  for (int64_t r = r0; r < r1; r += RM) {
    const int rm = static_cast<int>(std::min<int64_t>(RM, r1 - r));
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      tile_walk_detail::RunRows<RM, RN>(rm, rn, r, t, tile);
    }
  }
}

}  // namespace pg
