// Fidelity to exact arithmetic on the Mixture-of-Experts fixtures: the
// forward pass against the float64 reference (../shared/tools/ref_forward.py)
// stored in ../shared/fixtures/truth, next to llama.cpp's own error there.
//
// The truth files hold the reference's top-20 log-probs at every position of
// llama.cpp's greedy trajectory. Teacher-forced along that trajectory:
//   first_step_err  max |ours - truth| over our top-10 at the first generated
//                   position (the prompt's own logits: no trajectory, no routing
//                   history), worst case over the prompts;
//   wrong_argmax    steps whose argmax is not the exact argmax and the exact
//                   margin to it exceeds 0.01.
// The bar (fixtures/README.md): both no worse than llama.cpp's. The worst
// error over all steps is printed, not bounded: where two experts' selection
// scores nearly tie, float rounding decides which runs and any engine's
// logits then move by O(1) (the truth files mark those steps with route_gap).
// tools/fidelity.py scores prosgrow's own greedy trajectory the same way
// (docs/performance.md, "Mixture-of-Experts").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "model/model.h"
#include "model/test_kv_arena.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr double kMargin = 0.01;    // fidelity.py's default
constexpr double kRouteTie = 1e-3;  // fidelity.py's ROUTE_TIE

struct Fidelity {
  double first_step_err = 0;  // worst over cases
  double max_err_no_tie = 0;  // worst over steps whose routing gap >= kRouteTie
  double max_err = 0;
  int wrong_argmax = 0;
  int uncovered_first = 0;  // first-step top-10 ids missing from the truth's top-20 (unmeasured)
  // Steps where our argmax is not llama.cpp's greedy token although that
  // token is the exact argmax (by more than the margin): a disagreement with
  // llama.cpp that exact arithmetic does not excuse.
  int unexcused_greedy = 0;
  int steps = 0;
};

std::vector<double> LogSoftmax(const std::vector<float>& x) {
  double mx = -INFINITY, sum = 0;
  for (float v : x) mx = std::max<double>(mx, v);
  for (float v : x) sum += std::exp(v - mx);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] - mx - std::log(sum);
  return out;
}

// One step: our log-probs against the truth's top-20 {id: logprob}.
void Score(const std::vector<double>& lp, const nlohmann::json& top20, double gap, bool first, int32_t llama_token,
           Fidelity* f) {
  std::map<int64_t, double> truth;
  for (const auto& e : top20) truth[e["id"].get<int64_t>()] = e["logprob"].get<double>();
  const int64_t truth_best = top20[0]["id"].get<int64_t>();
  std::vector<int64_t> ids(lp.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  std::partial_sort(ids.begin(), ids.begin() + 10, ids.end(), [&](int64_t a, int64_t b) { return lp[a] > lp[b]; });
  double err = 0;
  for (int i = 0; i < 10; ++i) {
    auto it = truth.find(ids[i]);
    if (it == truth.end()) {
      f->uncovered_first += first ? 1 : 0;
      continue;
    }
    err = std::max(err, std::fabs(lp[ids[i]] - it->second));
  }
  f->max_err = std::max(f->max_err, err);
  if (gap >= kRouteTie) f->max_err_no_tie = std::max(f->max_err_no_tie, err);
  if (first) f->first_step_err = std::max(f->first_step_err, err);
  const bool llama_exact =
      llama_token == truth_best &&
      (top20.size() < 2 || top20[0]["logprob"].get<double>() - top20[1]["logprob"].get<double>() > kMargin);
  if (ids[0] != llama_token && llama_exact) ++f->unexcused_greedy;
  if (ids[0] != truth_best) {
    auto it = truth.find(ids[0]);
    // Not in the top-20: further below the argmax than the 20th, so beyond the margin.
    if (it == truth.end() || top20[0]["logprob"].get<double>() - it->second > kMargin) ++f->wrong_argmax;
  }
  ++f->steps;
}

Fidelity Measure(const Model& m, const nlohmann::json& truth) {
  Fidelity f;
  const ModelConfig& c = m.config();
  ThreadPool pool(2);
  ForwardScratch scratch;
  for (const auto& cs : truth["cases"]) {
    const auto prompt = cs["prompt_tokens"].get<std::vector<int32_t>>();
    const auto tokens = cs["tokens"].get<std::vector<int32_t>>();
    TestKvArena arena(c, 16, static_cast<int64_t>(prompt.size() + tokens.size() + 1), m.kv_dtype());
    std::vector<float> logits(static_cast<size_t>(c.n_vocab));
    BatchSeq b{prompt.data(), static_cast<int64_t>(prompt.size()), 0, arena.table(), arena.n_blocks(), true};
    EXPECT_TRUE(m.Forward({&b, 1}, arena.pages(), pool, scratch, logits.data()).ok());
    int64_t pos = static_cast<int64_t>(prompt.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      // Routing gaps exist for MoE models only; a dense step is never a near-tie.
      const nlohmann::json gap = cs.contains("route_gap") ? cs["route_gap"][i] : nlohmann::json();
      Score(LogSoftmax(logits), cs["truth_top20"][i], gap.is_null() ? INFINITY : gap.get<double>(), i == 0, tokens[i],
            &f);
      BatchSeq d{&tokens[i], 1, pos++, arena.table(), arena.n_blocks(), true};
      EXPECT_TRUE(m.Forward({&d, 1}, arena.pages(), pool, scratch, logits.data()).ok());
    }
  }
  return f;
}

// The bar (fixtures/README.md, issue 13): per fixture, no further from exact
// arithmetic than llama.cpp, read from the truth file's summary: wrong_argmax
// <= llama.cpp's, and max_err <= llama.cpp's on dense models, first_step_err
// <= llama.cpp's on MoE models (where a routing near-tie moves later steps by
// O(1) in any engine, so the worst step bounds nothing).
struct TruthCase {
  const char* model;
  AttentionMode mode;
  bool moe;
  // The default arithmetic misses the bar on the quantized fixtures (its
  // activations are rounded to 8 bits as llama.cpp's are, and which engine
  // lands closer is then luck; docs/quality.md, "Fidelity to exact
  // arithmetic"). There it is held to regression bounds (listed below the
  // test), and `--attn precise` carries the bar. < 0: the bar itself.
  double max_bound = -1;  // dense: max_err; MoE: first_step_err
  int wrong_bound = -1;
  // The bar's error divided by this: the MLA fixtures' `--attn precise` is
  // held to 10x closer to exact arithmetic than llama.cpp (issue 48).
  double closer = 1;
  // Greedy tokens equal llama.cpp's wherever llama.cpp's is the exact argmax.
  bool greedy_as_llama = false;
};

void PrintTo(const TruthCase& b, std::ostream* os) { *os << b.model; }

const char* ModeName(AttentionMode m) {
  return m == AttentionMode::kPrecise ? "precise" : m == AttentionMode::kLlamaF16 ? "llama" : "fast";
}

class TruthTest : public ::testing::TestWithParam<TruthCase> {};

TEST_P(TruthTest, NoFurtherFromExactArithmeticThanLlamaCpp) {
  const TruthCase& bar = GetParam();
  const std::string name = bar.model;
  const fs::path model_path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/models" / (name + ".gguf");
  const fs::path truth_path = fs::path(PROSGROW_SHARED_DIR) / "fixtures/truth" / ("expected-" + name + ".json");
  if (!fs::exists(model_path) || !fs::exists(truth_path)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  const nlohmann::json truth = nlohmann::json::parse(std::ifstream(truth_path));
  const nlohmann::json& llama = truth["summary"];
  auto model = Model::Load(model_path.string(), ModelOptionsFor(bar.mode));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Fidelity f = Measure(**model, truth);
  const double llama_first = llama["llama_first_step_err_max"].get<double>();
  const double llama_max = llama["llama_max_err"].get<double>();
  const int llama_wrong = llama["llama_wrong_argmax_margin_gt_0.01"].get<int>();
  std::printf(
      "%s [attn %s] vs float64: first_step_err %.6f (llama.cpp %.6f), wrong_argmax %d (llama.cpp %d), "
      "max_err %.4f (llama.cpp %.4f), away from routing near-ties %.4f (llama.cpp %.4f), %d steps, %d greedy "
      "differences from llama.cpp where its token is exact\n",
      name.c_str(), ModeName(bar.mode), f.first_step_err, llama_first, f.wrong_argmax, llama_wrong, f.max_err,
      llama_max, f.max_err_no_tie, llama.value("llama_max_err_no_near_tie", llama_max), f.steps, f.unexcused_greedy);
  EXPECT_EQ(f.steps, llama["steps"].get<int>());
  EXPECT_EQ(f.uncovered_first, 0) << "first-step top-10 ids outside the truth's top-20";
  const double err = bar.moe ? f.first_step_err : f.max_err;
  EXPECT_LE(err, bar.max_bound < 0 ? (bar.moe ? llama_first : llama_max) / bar.closer : bar.max_bound)
      << (bar.moe ? "first_step_err" : "max_err");
  EXPECT_LE(f.wrong_argmax, bar.wrong_bound < 0 ? llama_wrong : bar.wrong_bound);
  if (bar.greedy_as_llama) {
    EXPECT_EQ(f.unexcused_greedy, 0) << "steps whose token differs from llama.cpp's exact one";
  }
}

constexpr auto kFast = AttentionMode::kTiledF32;
constexpr auto kPrecise = AttentionMode::kPrecise;

// `--attn precise` meets the whole bar on every fixture. The default (`fast`)
// meets it on the float fixtures and tiny-glm4moe; elsewhere it is held to
// regression bounds above its measured figures (teacher-forced on llama.cpp's
// trajectory; llama.cpp's in brackets). With 8-bit activations any change of
// rounding order in a kernel moves these by a few tenths and steps either way;
// a modelling bug moves them by whole units.
//   small-llama-spm-q8_0    max 1.151 (1.023), wrong 9 (6)
//   small-llama-spm-q4_k_m  max 1.253 (1.100), wrong 9 (6)
//   tiny-qwen3moe-gpt2      wrong 2 (1): the long_1400_words prompt's step 23,
//                           a routing gap of 8.9e-6 (llama.cpp's one miss,
//                           "short" step 17 at a gap of 8e-5, is also ours)
//   small-qwen3moe-q4_k_m   first 1.156 (0.641), wrong 12 (13): its prompts
//                           cross routing near-ties (gaps down to 7e-7)
//                           before their last token
//   tiny-deepseek2-gpt2     first 0.286 (0.299), wrong 6 (3): the f16 latent
//                           rows alone move the "unicode" prompt by 0.081 in
//                           float64 (a routing gap of 4e-5 in layer 1)
//   tiny-glm-dsa-spm        first 0.7312 (0.7311), wrong 8 (8)
// MLA under `--attn precise` caches its latent rows in f32 (Model::kv_dtype)
// and is held to 10x closer than llama.cpp; measured first_step_err 2.2e-5
// (deepseek2) and 1.4e-5 (glm-dsa), no wrong argmax.
INSTANTIATE_TEST_SUITE_P(
    Fixtures, TruthTest,
    ::testing::Values(
        TruthCase{"tiny-llama-gpt2", kFast, false}, TruthCase{"tiny-llama-gpt2", kPrecise, false},
        TruthCase{"tiny-qwen3-spm", kFast, false}, TruthCase{"tiny-qwen3-spm", kPrecise, false},
        TruthCase{"small-llama-spm-q8_0", kFast, false, 1.5, 12}, TruthCase{"small-llama-spm-q8_0", kPrecise, false},
        TruthCase{"small-llama-spm-q4_k_m", kFast, false, 1.5, 12},
        TruthCase{"small-llama-spm-q4_k_m", kPrecise, false}, TruthCase{"tiny-qwen3moe-gpt2", kFast, true, -1, 2},
        TruthCase{"tiny-qwen3moe-gpt2", kPrecise, true}, TruthCase{"tiny-glm4moe-spm", kFast, true},
        TruthCase{"tiny-glm4moe-spm", kPrecise, true}, TruthCase{"small-qwen3moe-q4_k_m", kFast, true, 1.5, 16},
        TruthCase{"small-qwen3moe-q4_k_m", kPrecise, true}, TruthCase{"tiny-deepseek2-gpt2", kFast, true, -1, 8},
        TruthCase{"tiny-deepseek2-gpt2", kPrecise, true, -1, -1, 10, true},
        TruthCase{"tiny-glm-dsa-spm", kFast, true, 0.8},
        TruthCase{"tiny-glm-dsa-spm", kPrecise, true, -1, -1, 10, true}),
    [](const auto& info) {
      std::string s = std::string(info.param.model) + "_" + ModeName(info.param.mode);
      std::replace(s.begin(), s.end(), '-', '_');
      return s;
    });

}  // namespace
}  // namespace pg
