// prosgrow bench-model: llama-bench style throughput of the forward pass.
//   pp512 : one 512-token prefill (tokens/s)
//   tg128 : 128 single-token decode steps after that prompt (tokens/s)
//   bd4/bd16 : batched decode, 4 or 16 sequences one token each per step
// Tokens are pseudo-random ids; the KV arena is private (no tiers), f16.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "backend/cpu/cpu_features.h"
#include "base/clock.h"
#include "base/cli_util.h"
#include "bench_spec.h"
#include "engine_flags.h"
#include "engine/speculative/draft_model.h"
#include "model/model.h"
#include "device_flag.h"
#include "subcommands.h"
#include "synth/make_model.h"

namespace pg {
namespace {

struct Arena {
  Arena(const ModelConfig& c, int64_t page, int64_t n_seqs, int64_t tokens_per_seq) {
    blocks_per_seq = (tokens_per_seq + page - 1) / page;
    pages.layout = KvLayout{static_cast<int>(c.n_layer), static_cast<int>(c.n_head_kv), static_cast<int>(c.head_dim),
                            static_cast<int>(page), KvDtype::kF16};
    pages.block_bytes = pages.layout.block_bytes();
    mem.resize(pages.block_bytes * static_cast<size_t>(blocks_per_seq * n_seqs));
    pages.base = mem.data();
    table.resize(static_cast<size_t>(blocks_per_seq * n_seqs));
    std::iota(table.begin(), table.end(), 0);
  }
  const int32_t* table_of(int64_t seq) const { return table.data() + seq * blocks_per_seq; }
  KvPages pages;
  int64_t blocks_per_seq;
  std::vector<uint8_t> mem;
  std::vector<int32_t> table;
};

struct Stat {
  double mean = 0, sd = 0;
};

Stat Summarize(const std::vector<double>& v) {
  Stat s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

}  // namespace

int BenchModelMain(int argc, char** argv) {
  CLI::App app("Measure prefill and decode throughput (like llama-bench)", "prosgrow bench-model");
  std::string model_path;
  int threads = 0, reps = 3, n_prompt = 512, n_gen = 128;
  bool json = false, no_repack = false, precise = false;
  app.add_option("-m,--model", model_path, "GGUF model (default: the built-in model)");
  app.add_option("-t,--threads", threads, "threads (default: cores)")->check(CLI::Range(0, 1024));
  app.add_option("-r,--repetitions", reps, "repetitions per test")->check(CLI::Range(1, 100));
  app.add_option("-p,--n-prompt", n_prompt, "prompt tokens for pp")->check(CLI::Range(1, 1 << 16));
  app.add_option("-n,--n-gen", n_gen, "generated tokens for tg / batched decode")->check(CLI::Range(1, 1 << 16));
  app.add_flag("--no-repack", no_repack, "keep weights in the file's row-major layout (A/B of the repacked kernels)");
  app.add_flag("--precise", precise, "matrix products on f32 activations, row-major weights (--attn precise)");
  app.add_flag("--json", json, "print JSON");
  std::string device = "cpu";
  AddDeviceFlag(app, &device);
  SpecFlags spec_flags;
  AddSpecFlags(app, &spec_flags);
  std::vector<std::string> tests = {"pp", "tg", "bd4", "bd16"};
  app.add_option("--tests", tests, "tests to run, e.g. --tests tg (tg+spec runs with --spec)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pp", "tg", "bd4", "bd16"}));
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  if (Status st = CheckDeviceFlag(device); !st.ok()) return Fail("bench-model", st.message());
  auto spec = ToSpecConfig(spec_flags);
  if (!spec.ok()) return Fail("bench-model", spec.status().message());
  if (model_path.empty()) {
    auto def = EnsureDefaultModel("");
    if (!def.ok()) return Fail("bench-model", def.status().message());
    model_path = *def;
  }
  ModelOptions options;
  options.repack_weights = !no_repack;
  if (precise) options = ModelOptionsFor(AttentionMode::kPrecise);
  auto model = Model::Load(model_path, options);
  if (!model.ok()) return Fail("bench-model", model.status().message());
  const Model& m = **model;
  const ModelConfig& c = m.config();
  ThreadPool pool(threads);
  // --spec draft: the draft model, with a private KV pool for one sequence.
  std::unique_ptr<DraftModel> draft_model;
  if (!spec->draft_model.empty()) {
    auto tok = Tokenizer::FromGguf(m.file());
    if (!tok.ok()) return Fail("bench-model", tok.status().message());
    auto d = DraftModel::Load(spec->draft_model, options, model_path, m, **tok);
    if (!d.ok()) return Fail("bench-model", d.status().message());
    draft_model = std::move(*d);
    const KvLayout dl = draft_model->Layout(16, KvDtype::kF16);
    const uint64_t bytes = dl.block_bytes() * static_cast<uint64_t>((n_gen + spec->draft_max + 2) / 16 + 2);
    if (Status st = draft_model->CreateKv(bytes, 16, KvDtype::kF16); !st.ok()) return Fail("bench-model", st.message());
  }
  ForwardScratch scratch;
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> tok_dist(0, static_cast<int32_t>(c.n_vocab - 1));
  std::vector<float> logits(static_cast<size_t>(c.n_vocab * 16));
  const int64_t page = 16;

  auto run_pp = [&]() {
    Arena a(c, page, 1, n_prompt);
    std::vector<int32_t> toks(static_cast<size_t>(n_prompt));
    for (auto& t : toks) t = tok_dist(rng);
    BatchSeq b{toks.data(), n_prompt, 0, a.table_of(0), a.blocks_per_seq, true};
    double t0 = NowSeconds();
    Status st = m.Forward({&b, 1}, a.pages, pool, scratch, logits.data());
    double dt = NowSeconds() - t0;
    return st.ok() ? n_prompt / dt : -1.0;
  };
  // Batched decode of n_seqs sequences, n_gen steps, each after a 1-token prompt.
  auto run_decode = [&](int64_t n_seqs) {
    Arena a(c, page, n_seqs, n_gen + 1);
    std::vector<int32_t> toks(static_cast<size_t>(n_seqs));
    std::vector<BatchSeq> batch(static_cast<size_t>(n_seqs));
    double elapsed = 0;
    for (int64_t step = 0; step <= n_gen; ++step) {
      for (int64_t s = 0; s < n_seqs; ++s) {
        toks[s] = tok_dist(rng);
        batch[s] = BatchSeq{&toks[s], 1, step, a.table_of(s), a.blocks_per_seq, true};
      }
      double t0 = NowSeconds();
      Status st = m.Forward(batch, a.pages, pool, scratch, logits.data());
      if (!st.ok()) return -1.0;
      if (step > 0) elapsed += NowSeconds() - t0;  // step 0 is the 1-token prompt
    }
    return static_cast<double>(n_seqs * n_gen) / elapsed;
  };

  run_decode(1);  // warm-up: page in the weights
  struct Row {
    std::string test;
    Stat tps;
    std::vector<double> samples;  // tokens/s of each repetition
  };
  std::vector<Row> rows;
  auto measure = [&](const std::string& name, auto fn) {
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) v.push_back(fn());
    rows.push_back({name, Summarize(v), v});
  };
  auto wanted = [&](const char* t) { return std::find(tests.begin(), tests.end(), t) != tests.end(); };
  if (wanted("pp")) measure("pp" + std::to_string(n_prompt), run_pp);
  if (wanted("tg") && !spec->enabled()) measure("tg" + std::to_string(n_gen), [&] { return run_decode(1); });
  if (wanted("bd4")) measure("bd4x" + std::to_string(n_gen), [&] { return run_decode(4); });
  if (wanted("bd16")) measure("bd16x" + std::to_string(n_gen), [&] { return run_decode(16); });
  // tg with speculative decoding (--spec ...): greedy, drafts verified per step.
  SpecDecodeResult spec_total;
  if (spec->enabled()) {
    // Plain tg and tg+spec alternate, so a shared machine's load hits both alike.
    std::vector<double> plain, with_spec;
    for (int r = 0; r < reps; ++r) {
      if (wanted("tg")) plain.push_back(run_decode(1));
      SpecDecodeResult s = RunSpecDecode(m, pool, *spec, n_gen, tok_dist(rng), rng(), draft_model.get());
      spec_total.steps += s.steps;
      spec_total.drafted += s.drafted;
      spec_total.accepted += s.accepted;
      with_spec.push_back(s.tokens_per_s);
    }
    if (wanted("tg")) rows.push_back({"tg" + std::to_string(n_gen), Summarize(plain)});
    rows.push_back({"tg" + std::to_string(n_gen) + "+spec", Summarize(with_spec)});
    if (wanted("tg"))
      std::fprintf(stderr, "spec: tg+spec / tg = %.2fx\n", rows.back().tps.mean / rows[rows.size() - 2].tps.mean);
    std::fprintf(stderr, "spec: %s, K=%d%s: %lld steps, %lld drafted, %lld accepted (rate %.3f, mean length %.2f)\n",
                 spec_flags.spec.c_str(), spec->draft_max, spec->synthetic() ? ", SYNTHETIC acceptance" : "",
                 static_cast<long long>(spec_total.steps), static_cast<long long>(spec_total.drafted),
                 static_cast<long long>(spec_total.accepted),
                 spec_total.drafted ? static_cast<double>(spec_total.accepted) / static_cast<double>(spec_total.drafted) : 0.0,
                 spec_total.steps ? 1.0 + static_cast<double>(spec_total.accepted) / static_cast<double>(spec_total.steps) : 0.0);
  }

  std::string types;
  for (const auto& t : m.file().tensors())
    if (t.name == "blk.0.attn_q.weight") types = TypeName(t.type);
  if (json) {
    nlohmann::json j;
    j["model"] = model_path;
    j["arch"] = c.arch;
    j["type"] = types;
    j["threads"] = pool.size();
    j["isa"] = IsaName(ActiveIsa());
    for (auto& r : rows)
      j["results"].push_back(
          {{"test", r.test}, {"tokens_per_s", r.tps.mean}, {"stddev", r.tps.sd}, {"samples", r.samples}});
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("| model | type | threads | isa | test | t/s |\n|---|---|---|---|---|---|\n");
    for (auto& r : rows)
      std::printf("| %s | %s | %d | %s | %s | %.2f ± %.2f |\n", c.name.c_str(), types.c_str(), pool.size(),
                  IsaName(ActiveIsa()), r.test.c_str(), r.tps.mean, r.tps.sd);
  }
  return 0;
}

}  // namespace pg
