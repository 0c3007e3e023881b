// The MoE kernels (kernels/moe.h) against the CPU: RouteTokens against
// RouteToken (model/expert_router.h: the same experts, weights within 1e-12
// normalised error; also with expert groups), and the whole routed FFN (route, sort by expert,
// gather, grouped gate/up, SiLU*mul, grouped down, weighted scatter-add)
// against a per-token composition of RouteToken and MatMulPrecise, in a step
// where most experts get no token (tolerance 1e-9, f32 summation order).
#include "gpu/kernels/moe.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"
#include "backend/cpu/vec_ops.h"
#include "gpu/gpu_test_util.h"
#include "gpu/kernels/elementwise.h"
#include "model/expert_router.h"

namespace pg::gpu {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU test helpers (gpu_test_util.h)

struct Routed {
  std::vector<int32_t> experts;
  std::vector<float> weights;
};

Routed CpuRoute(const ExpertRouterParams& p, const std::vector<float>& logits, const float* bias, int64_t T) {
  Routed r{std::vector<int32_t>(T * p.k), std::vector<float>(T * p.k)};
  std::vector<float> probs(p.n_expert);
  for (int64_t t = 0; t < T; ++t) {
    RouteToken(p, logits.data() + t * p.n_expert, bias, probs.data(), r.experts.data() + t * p.k,
               r.weights.data() + t * p.k);
  }
  return r;
}

TEST(GpuMoe, RouterMatchesRouteTokenForSoftmaxAndBiasedSigmoid) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t T = 5, E = 64, K = 8;
  const auto logits = RandomFloats(T * E, 1, -4, 4), bias = RandomFloats(E, 2, -0.5f, 0.5f);
  struct Case {
    ExpertGating gating;
    bool norm;
    float scale;
    bool with_bias;
  };
  for (const Case c : {Case{ExpertGating::kSoftmax, false, 0, false}, Case{ExpertGating::kSoftmax, true, 0, false},
                       Case{ExpertGating::kSigmoid, true, 2.5f, true}}) {
    const ExpertRouterParams p{E, K, c.gating, c.norm, c.scale};
    const Routed ref = CpuRoute(p, logits, c.with_bias ? bias.data() : nullptr, T);
    DeviceArray<float> dl(logits), db(bias), dw(T * K);
    DeviceArray<int32_t> de(T * K);
    const RouterSpec spec{int32_t(E), int32_t(K), c.gating == ExpertGating::kSigmoid, c.norm, c.scale};
    ForEachWarpSize([&] {
      PG_GPU_OK(RouteTokens(spec, dl.get(), c.with_bias ? db.get() : nullptr, T, de.get(), dw.get(), nullptr));
      EXPECT_EQ(de.Download(), ref.experts);
      EXPECT_LE(Nmse(dw.Download(), ref.weights), 1e-12);
    });
  }
}

// Group-limited routing (deepseek2): 64 experts in 8 groups, the 3 groups with
// the best two-expert sums kept, sigmoid with a selection bias, softmax without.
TEST(GpuMoe, RouterMatchesRouteTokenWithExpertGroups) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t T = 7, E = 64, K = 6, G = 8, GU = 3;
  const auto logits = RandomFloats(T * E, 8, -4, 4), bias = RandomFloats(E, 9, -0.5f, 0.5f);
  for (const bool sigmoid : {false, true}) {
    const ExpertRouterParams p{E, K, sigmoid ? ExpertGating::kSigmoid : ExpertGating::kSoftmax, true, 2.5f, G, GU};
    const float* hb = sigmoid ? bias.data() : nullptr;
    const Routed ref = CpuRoute(p, logits, hb, T);
    DeviceArray<float> dl(logits), db(bias), dw(T * K);
    DeviceArray<int32_t> de(T * K);
    RouterSpec spec{int32_t(E), int32_t(K), sigmoid, true, 2.5f};
    spec.n_group = G;
    spec.n_group_used = GU;
    ForEachWarpSize([&] {
      PG_GPU_OK(RouteTokens(spec, dl.get(), sigmoid ? db.get() : nullptr, T, de.get(), dw.get(), nullptr));
      EXPECT_EQ(de.Download(), ref.experts);
      EXPECT_LE(Nmse(dw.Download(), ref.weights), 1e-12);
    });
  }
}

// n_expert stacks of (rows, cols) Q4_K matrices, host and device.
struct Stack {
  Stack(int64_t n_expert, int64_t rows, int64_t cols, uint32_t seed) : rows(rows), cols(cols) {
    row_bytes = WTypeRowBytes(WType::kQ4_K, cols);
    q.resize(n_expert * rows * row_bytes);
    const auto w = RandomWeights(n_expert * rows * cols, seed, 0.1f);
    for (int64_t r = 0; r < n_expert * rows; ++r) {
      EXPECT_TRUE(QuantizeRow(GgmlType::Q4_K, w.data() + r * cols, q.data() + r * row_bytes, cols).ok());
    }
    dev = std::make_unique<DeviceArray<uint8_t>>(q);
  }
  WeightMatrix Cpu(int64_t e) const {
    return MakeWeightMatrix(GgmlType::Q4_K, q.data() + e * rows * row_bytes, rows, cols);
  }
  DeviceMatrix Device() const { return {WType::kQ4_K, dev->get(), rows, cols, row_bytes, rows * row_bytes}; }
  int64_t rows, cols, row_bytes;
  std::vector<uint8_t> q;
  std::unique_ptr<DeviceArray<uint8_t>> dev;
};

TEST(GpuMoe, RoutedFfnMatchesCpuWhenSomeExpertsGetNoToken) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t T = 6, E = 8, K = 2, D = 256, F = 256;
  // Only experts 1, 3 and 6 can win: every other logit is far below.
  auto logits = RandomFloats(T * E, 3, -1, 1);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t e = 0; e < E; ++e) logits[t * E + e] += (e == 1 || e == 3 || e == 6) ? 0.0f : -20.0f;
  }
  const auto x = RandomFloats(T * D, 4);
  const Stack gate(E, F, D, 5), up(E, F, D, 6), down(E, D, F, 7);
  const ExpertRouterParams p{E, K, ExpertGating::kSoftmax, true, 0};
  const Routed r = CpuRoute(p, logits, nullptr, T);
  ThreadPool pool(1);
  std::vector<float> ref(T * D, 0.0f), g(F), u(F), y(D);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = r.experts[t * K + j];
      MatMulPrecise(gate.Cpu(e), x.data() + t * D, D, 1, g.data(), F, pool);
      MatMulPrecise(up.Cpu(e), x.data() + t * D, D, 1, u.data(), F, pool);
      pg::SiluMul(g.data(), u.data(), g.data(), F);
      MatMulPrecise(down.Cpu(e), g.data(), F, 1, y.data(), D, pool);
      for (int64_t d = 0; d < D; ++d) ref[t * D + d] += r.weights[t * K + j] * y[d];
    }
  }
  DeviceArray<float> dl(logits), dx(x), dw(T * K), xg(T * K * D), gg(T * K * F), ug(T * K * F), yg(T * K * D),
      out(T * D);
  DeviceArray<int32_t> de(T * K), off(E + 1), row_token(T * K), slot_row(T * K);
  ForEachWarpSize([&] {
    PG_GPU_OK(RouteTokens(RouterSpec{E, K, false, true, 0}, dl.get(), nullptr, T, de.get(), dw.get(), nullptr));
    PG_GPU_OK(SortByExpert(de.get(), T, K, E, off.get(), row_token.get(), slot_row.get(), nullptr));
    PG_GPU_OK(GatherRows(dx.get(), row_token.get(), T * K, D, xg.get(), nullptr));
    PG_GPU_OK(GroupedMatMul(gate.Device(), E, off.get(), xg.get(), T * K, gg.get(), nullptr));
    PG_GPU_OK(GroupedMatMul(up.Device(), E, off.get(), xg.get(), T * K, ug.get(), nullptr));
    PG_GPU_OK(SiluMul(gg.get(), ug.get(), gg.get(), T * K * F, nullptr));
    PG_GPU_OK(GroupedMatMul(down.Device(), E, off.get(), gg.get(), T * K, yg.get(), nullptr));
    PG_GPU_OK(MoeCombine(yg.get(), slot_row.get(), dw.get(), T, K, D, false, out.get(), nullptr));
    EXPECT_LE(Nmse(out.Download(), ref), 1e-9);
    const auto offsets = off.Download();
    for (int64_t e = 0; e < E; ++e) {
      if (e != 1 && e != 3 && e != 6) {
        EXPECT_EQ(offsets[e], offsets[e + 1]) << "expert " << e << " got a token";
      }
    }
    EXPECT_EQ(offsets[E], T * K);
  });
  // accumulate: a second combine adds the same sum on top (the shared expert's slot).
  PG_GPU_OK(MoeCombine(yg.get(), slot_row.get(), dw.get(), T, K, D, true, out.get(), nullptr));
  for (auto& v : ref) v *= 2;
  EXPECT_LE(Nmse(out.Download(), ref), 1e-9);
}

}  // namespace
}  // namespace pg::gpu
