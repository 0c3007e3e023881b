// The device executor on Hugging Face FP8 directories (E4M3 weights with
// 128x128-block weight_scale_inv, as make-model --hf-dtype fp8 writes them from
// a seeded BF16 model): the weights stay FP8 on the device (one byte each plus
// the block scales, DeviceWeights::bytes) and the logits agree with the CPU
// forward pass on the same directory (precise products) to the tolerances of
// the GGUF weight types, with the same greedy token on every row, dense and
// MoE. With fp8_gemm (--device-prefill fp8) the prefill step's FP8 products
// take FP8 activations (GemmFp8): within kFp8Gemm, measured in docs/gpu.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "gguf/gguf_file.h"
#include "gpu/executor/device_agreement.h"
#include "gpu/executor/device_executor.h"
#include "gpu/executor/device_test_models.h"
#include "gpu/gpu_test_util.h"
#include "synth/hf_export.h"
#include "synth/make_model.h"

namespace pg::gpu {
namespace {

namespace fs = std::filesystem;

// An FP8 directory of the tiny (or tiny-moe) `arch`, made once per process under the temp dir.
std::string Fp8Dir(const std::string& arch, const std::string& shape) {
  const fs::path dir = fs::temp_directory_path() / ("pg_device_fp8_" + std::to_string(::getpid()));
  const fs::path gguf = dir / (arch + ".gguf"), hf = dir / (arch + "-fp8");
  if (fs::exists(hf / "config.json")) return hf.string();
  fs::create_directories(dir);
  MakeModelOptions o;
  o.shape = shape;
  o.arch = arch;
  o.type = GgmlType::BF16;
  o.seed = 3;
  o.n_threads = 2;
  o.out_path = gguf.string();
  if (!MakeModel(o).ok()) return "";
  auto file = GgufFile::Open(gguf.string());
  HfExportOptions eo;
  eo.fp8 = true;
  if (!file.ok() || !ExportHfDir(**file, hf.string(), eo).ok()) return "";
  return hf.string();
}

struct Fp8Case {
  const char* arch;
  const char* shape;
  double tol;  // normalised error of the logits against the CPU's
};

void ExpectAgreement(const Fp8Case& c, const DeviceOptions& o, bool want_greedy) {
  const std::string dir = Fp8Dir(c.arch, c.shape);
  ASSERT_FALSE(dir.empty()) << "make-model / FP8 export failed";
  auto model = Model::Load(dir, ModelOptionsFor(AttentionMode::kPrecise));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto dev = DeviceExecutor::Create(**model, o);
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  // FP8 kept: every layer matrix a byte per weight, not two (BF16).
  EXPECT_EQ((*dev)->weights().layers[0].wq.type, WType::kFP8_E4M3);
  // Tiny's 64 x 64 q is one 128x128 tile (one scale: per row); its 64 x 256 down projection two.
  const DeviceLayer& l0 = (*dev)->weights().layers[0];
  EXPECT_EQ(l0.wq.scale_layout, Fp8Layout::kPerRow);
  EXPECT_EQ((l0.down.rows > 0 ? l0.down : l0.down_exps).scale_layout, Fp8Layout::kBlock128);
  auto a = CompareWithCpu(**model, o, KvDtype::kBF16);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NE(a->arithmetic.find(o.fp8_gemm ? "+fp8gemm" : "-f32"), std::string::npos) << a->arithmetic;
  for (size_t i = 0; i < a->steps.size(); ++i) {
    const StepAgreement& s = a->steps[i];
    std::printf("%s FP8 dir, %s step %zu: normalised error %.2e, greedy %lld of %lld rows\n", c.arch,
                a->arithmetic.c_str(), i, s.nmse, static_cast<long long>(s.greedy_equal),
                static_cast<long long>(s.rows));
    EXPECT_LE(s.nmse, c.tol) << c.arch << " step " << i;
    if (want_greedy) {
      EXPECT_EQ(s.greedy_equal, s.rows) << c.arch << " step " << i << ": greedy token differs first at row "
                                        << s.first_differing_row;
    }
  }
}

// As device_executor_test.cc's dense and MoE bounds (f32 products on both sides).
constexpr double kDense = 5e-7, kMoe = 1e-5;

TEST(DeviceFp8, HfFp8DirectoryMatchesTheCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const Fp8Case cases[] = {{"qwen3", "tiny", kDense}, {"llama", "tiny", kDense}, {"qwen3moe", "tiny-moe", kMoe}};
  for (const Fp8Case& c : cases) ExpectAgreement(c, DeviceOptions{}, true);
}

// An FP8_E4M3 GGUF (make-model --type fp8_e4m3: every 64 weights their own
// scale, the embedding too): the matrices kept FP8 in the 64-weight-block
// layout, the FP8 embedding (GetRows reads no FP8) converted to BF16, and
// with it the tied output matrix: the logits' error is then BF16 weights'
// (measured 1.1e-5, as the Q4_K file's BF16-converted Q5_0 matrices).
TEST(DeviceFp8, Fp8GgufMatchesTheCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::string path = test::DeviceTestModel("qwen3", "tiny", GgmlType::FP8_E4M3);
  ASSERT_FALSE(path.empty()) << "make-model failed";
  auto model = Model::Load(path, ModelOptionsFor(AttentionMode::kPrecise));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto dev = DeviceExecutor::Create(**model, DeviceOptions{});
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  const DeviceWeights& w = (*dev)->weights();
  EXPECT_EQ(w.layers[0].wq.type, WType::kFP8_E4M3);
  EXPECT_EQ(w.layers[0].down.scale_layout, Fp8Layout::kBlock64);  // 64 x 256: four scales a row
  EXPECT_NE(w.token_embd.type, WType::kFP8_E4M3);
  auto a = CompareWithCpu(**model, DeviceOptions{}, KvDtype::kBF16);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  for (const StepAgreement& s : a->steps) {
    std::printf("qwen3 FP8_E4M3 GGUF step: normalised error %.2e\n", s.nmse);
    EXPECT_LE(s.nmse, 1e-4);
    EXPECT_EQ(s.greedy_equal, s.rows);
  }
}

// FP8 activations in the 14-token prefill step (E4M3: 3 mantissa bits).
constexpr double kFp8Gemm = 3e-2;

TEST(DeviceFp8, Fp8GemmPrefillStaysNearTheCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  DeviceOptions o;
  o.gemm_min_tokens = 8;
  o.fp8_gemm = true;
  const Fp8Case cases[] = {{"qwen3", "tiny", kFp8Gemm}, {"qwen3moe", "tiny-moe", kFp8Gemm}};
  for (const Fp8Case& c : cases) ExpectAgreement(c, o, false);
}

TEST(DeviceFp8, Fp8GemmNeedsTheGemmPrefill) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::string dir = Fp8Dir("qwen3", "tiny");
  ASSERT_FALSE(dir.empty());
  auto model = Model::Load(dir);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  DeviceOptions o;
  o.fp8_gemm = true;
  auto dev = DeviceExecutor::Create(**model, o);
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("fp8_gemm needs gemm_min_tokens"), std::string::npos);
}

}  // namespace
}  // namespace pg::gpu
