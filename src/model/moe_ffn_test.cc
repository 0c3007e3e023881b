// MoeFfn on a fixture's MoE layer against a plain double-precision
// evaluation (dequantized weights, per token: route, top-k, weighted sum of
// SwiGLU experts, shared expert), for a batch whose tokens spread over the
// experts unevenly; and each expert of a repacking load's stacks the same
// bytes as that expert's matrix repacked alone.
#include "model/moe_ffn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"
#include "model/expert_router.h"
#include "model/model.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// n standard normal values, drawn from an mt19937 seeded with `seed`.
std::vector<float> Gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

std::vector<double> Dequant(const WeightMatrix& m) {
  std::vector<float> f(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r)
    EXPECT_TRUE(
        DequantizeRow(m.type, static_cast<const uint8_t*>(m.data) + r * m.row_bytes, &f[r * m.cols], m.cols).ok());
  return {f.begin(), f.end()};
}

// y (rows) = W x
std::vector<double> Apply(const WeightMatrix& m, const std::vector<double>& x) {
  const std::vector<double> w = Dequant(m);
  std::vector<double> y(static_cast<size_t>(m.rows));
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) y[r] += w[r * m.cols + c] * x[c];
  return y;
}

std::vector<double> SwiGlu(const WeightMatrix& g, const WeightMatrix& u, const WeightMatrix& d,
                           const std::vector<double>& x) {
  std::vector<double> a = Apply(g, x), b = Apply(u, x);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] / (1 + std::exp(-a[i])) * b[i];
  return Apply(d, a);
}

std::unique_ptr<Model> LoadFixture(const std::string& name) {
  const fs::path path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (name + ".gguf");
  if (!fs::exists(path)) return nullptr;
  auto m = Model::Load(path.string());  // default options: repacking on
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

// Layer `layer`'s tensor `name` as the file stores it (row-major); for a 3-D
// expert stack, expert e's slice.
WeightMatrix FileMatrix(const Model& m, int64_t layer, const std::string& name, int64_t e = 0) {
  const GgufTensorInfo* t = m.source().FindTensor("blk." + std::to_string(layer) + "." + name);
  if (t == nullptr) return {};
  WeightMatrix w = MakeWeightMatrix(t->type, t->data, t->dims[1], t->dims[0]);
  w.data = t->data + static_cast<size_t>(e) * static_cast<size_t>(w.rows) * w.row_bytes;
  return w;
}

// The SwiGLU of expert e (or the shared expert, e < 0) of `layer`, from the file.
std::vector<double> FileSwiGlu(const Model& m, int64_t layer, int64_t e, const std::vector<double>& x) {
  if (e < 0)
    return SwiGlu(FileMatrix(m, layer, "ffn_gate_shexp.weight"), FileMatrix(m, layer, "ffn_up_shexp.weight"),
                  FileMatrix(m, layer, "ffn_down_shexp.weight"), x);
  return SwiGlu(FileMatrix(m, layer, "ffn_gate_exps.weight", e), FileMatrix(m, layer, "ffn_up_exps.weight", e),
                FileMatrix(m, layer, "ffn_down_exps.weight", e), x);
}

class MoeFfnTest : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeFfnTest, GroupedExpertsMatchAPlainEvaluation) {
  auto model = LoadFixture(GetParam());
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const ModelConfig& c = model->config();
  const int64_t layer = c.moe.n_dense_lead, D = c.n_embd, K = c.moe.n_expert_used, T = 23;
  const LayerWeights& L = model->weights().layers[static_cast<size_t>(layer)];
  const std::vector<float> h = Gaussian(static_cast<size_t>(T * D), 5);
  std::vector<float> out(h.size());
  ThreadPool pool(3);
  MoeScratch scratch;
  MatMulScratch mm;
  mm.Reserve(std::max(D, c.moe.n_ff_exp * std::max<int64_t>(1, c.moe.n_shared)), T);
  MoeFfn(c, L, h.data(), T, out.data(), pool, scratch, mm);

  // F16 experts see activations rounded to f16; K-quants see them quantized
  // to 8 bits per element (Q8_K), twice (gate/up, then down).
  const double tol = L.gate_exps.first.type == GgmlType::F16 ? 2e-3 : 5e-2;
  double worst = 0;
  const ExpertRouterParams rp = ExpertRouterParams::From(c.moe);
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<double> x(h.begin() + t * D, h.begin() + (t + 1) * D);
    const std::vector<double> logits = Apply(L.router, x);
    std::vector<float> lf(logits.begin(), logits.end()), probs(lf.size()), w(static_cast<size_t>(K));
    std::vector<int32_t> ex(static_cast<size_t>(K));
    RouteToken(rp, lf.data(), L.router_bias, probs.data(), ex.data(),
               w.data());  // expert_router_test checks the routing
    std::vector<double> want(static_cast<size_t>(D));
    for (int64_t j = 0; j < K; ++j) {
      const std::vector<double> y = FileSwiGlu(*model, layer, ex[j], x);
      for (int64_t d = 0; d < D; ++d) want[d] += w[j] * y[d];
    }
    if (L.gate_shexp.rows > 0) {
      const std::vector<double> y = FileSwiGlu(*model, layer, -1, x);
      for (int64_t d = 0; d < D; ++d) want[d] += y[d];
    }
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    for (int64_t d = 0; d < D; ++d) {
      worst = std::max(worst, std::fabs(out[t * D + d] - want[d]) / scale);
      ASSERT_NEAR(out[t * D + d], want[d], tol * scale) << "token " << t << " dim " << d;
    }
  }
  std::printf("%s: worst |grouped - double| / max|double| = %.2e\n", GetParam(), worst);
}

// The grouped products (the default) give exactly the bits of one SwiGLU
// per expert, for a decode token, a batched-decode step and a prefill, on 1-3
// threads.
TEST_P(MoeFfnTest, GroupedProductsAreThePerExpertPathsBits) {
  auto model = LoadFixture(GetParam());
  if (!model) GTEST_SKIP() << "fixtures absent";
  const ModelConfig& c = model->config();
  const int64_t D = c.n_embd;
  const LayerWeights& L = model->weights().layers[static_cast<size_t>(c.n_layer - 1)];
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 1);
  for (int64_t T : {1, 4, 16, 37}) {
    std::vector<float> h(static_cast<size_t>(T * D));
    for (float& v : h) v = nd(rng);
    std::vector<float> want(h.size()), got(h.size());
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      MoeScratch scratch;
      MatMulScratch mm;
      mm.Reserve(std::max(D, c.moe.n_ff_exp * std::max<int64_t>(1, c.moe.n_shared)), T * c.moe.n_expert_used);
      MoeFfn(c, L, h.data(), T, want.data(), pool, scratch, mm, false, ExpertProducts::kPerExpert);
      MoeFfn(c, L, h.data(), T, got.data(), pool, scratch, mm, false, ExpertProducts::kGrouped);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
          << T << " tokens, " << threads << " threads";
    }
  }
}

// The same layer with precise products (f32 activations, MatMulPrecise): only
// f32 rounding is left, so it lands orders of magnitude closer to the double
// evaluation than the 8-bit (or f16) activations above.
TEST_P(MoeFfnTest, PreciseProductsMatchAPlainEvaluationClosely) {
  const fs::path path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (std::string(GetParam()) + ".gguf");
  if (!fs::exists(path)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  auto model = Model::Load(path.string(), ModelOptionsFor(AttentionMode::kPrecise));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = (*model)->config();
  const int64_t layer = c.moe.n_dense_lead, D = c.n_embd, K = c.moe.n_expert_used, T = 9;
  const LayerWeights& L = (*model)->weights().layers[static_cast<size_t>(layer)];
  const std::vector<float> h = Gaussian(static_cast<size_t>(T * D), 6);
  std::vector<float> out(h.size());
  ThreadPool pool(2);
  MoeScratch scratch;
  MatMulScratch mm;
  MoeFfn(c, L, h.data(), T, out.data(), pool, scratch, mm, /*precise=*/true);
  const ExpertRouterParams rp = ExpertRouterParams::From(c.moe);
  double worst = 0;
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<double> x(h.begin() + t * D, h.begin() + (t + 1) * D);
    const std::vector<double> logits = Apply(L.router, x);
    std::vector<float> lf(logits.begin(), logits.end()), probs(lf.size()), w(static_cast<size_t>(K));
    std::vector<int32_t> ex(static_cast<size_t>(K));
    RouteToken(rp, lf.data(), L.router_bias, probs.data(), ex.data(), w.data());
    std::vector<double> want(static_cast<size_t>(D));
    for (int64_t j = 0; j < K; ++j) {
      const std::vector<double> y = FileSwiGlu(**model, layer, ex[j], x);
      for (int64_t d = 0; d < D; ++d) want[d] += w[j] * y[d];
    }
    if (L.gate_shexp.rows > 0) {
      const std::vector<double> y = FileSwiGlu(**model, layer, -1, x);
      for (int64_t d = 0; d < D; ++d) want[d] += y[d];
    }
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    for (int64_t d = 0; d < D; ++d) worst = std::max(worst, std::fabs(out[t * D + d] - want[d]) / scale);
  }
  std::printf("%s precise: worst |grouped - double| / max|double| = %.2e\n", GetParam(), worst);
  EXPECT_LT(worst, 1e-4);
}

// A repacking load repacks each stack as one matrix; every expert's slice of
// it must be exactly that expert's matrix repacked alone.
TEST_P(MoeFfnTest, EachExpertOfARepackedStackIsThatExpertRepacked) {
  auto model = LoadFixture(GetParam());
  if (!model) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const ModelConfig& c = model->config();
  for (int64_t l = c.moe.n_dense_lead; l < c.n_layer; ++l) {
    const LayerWeights& L = model->weights().layers[static_cast<size_t>(l)];
    const std::pair<const ExpertStack*, const char*> stacks[] = {{&L.gate_exps, "ffn_gate_exps.weight"},
                                                                 {&L.up_exps, "ffn_up_exps.weight"},
                                                                 {&L.down_exps, "ffn_down_exps.weight"}};
    for (const auto& [s, name] : stacks) {
      for (int64_t e : {int64_t{0}, int64_t{3}, c.moe.n_expert - 1}) {
        RepackedWeights alone;
        const WeightMatrix want = alone.Add(FileMatrix(*model, l, name, e), ActiveKernels());
        const WeightMatrix got = s->Expert(e);
        EXPECT_EQ(got.layout, want.layout) << l << name;
        EXPECT_EQ(got.type, want.type);
        EXPECT_EQ(got.rows, want.rows);
        EXPECT_EQ(got.row_bytes, want.row_bytes);
        const size_t bytes = GroupOffset(want, want.rows);
        EXPECT_EQ(s->expert_bytes, bytes);
        EXPECT_EQ(0, std::memcmp(got.data, want.data, bytes)) << "layer " << l << " " << name << " expert " << e;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MoeFfnTest,
                         ::testing::Values("tiny-qwen3moe-gpt2", "tiny-glm4moe-spm", "small-qwen3moe-q4_k_m"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::erase(s, '-');
                           return s;
                         });

}  // namespace
}  // namespace pg
