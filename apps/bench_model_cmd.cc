// prosgrow bench-model: llama-bench style throughput of the forward pass.
//   pp512 : one 512-token prefill (tokens/s)
//   tg128 : 128 single-token decode steps after that prompt (tokens/s)
//   bd4/bd16 : batched decode, 4 or 16 sequences one token each per step
// -d N (llama-bench's --n-depth): each test starts with N tokens already in
// every sequence's context (prefilled untimed), so its attention reads N more
// keys per row: "pp512 @ d2048" as llama-bench names it.
// Tokens are pseudo-random ids; the KV arena is private (no tiers), f16.
// --device cuda[:N] (a build with a GPU backend): the same tests through the
// device executor, its KV arena in device memory (DeviceBlockArena).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "backend/cpu/cpu_features.h"
#include "base/check.h"
#include "base/cli_util.h"
#include "base/clock.h"
#include "base/large_alloc.h"
#include "bench_spec.h"
#include "device_flag.h"
#include "engine/backend.h"
#include "engine/executor.h"
#include "engine_flags.h"
#include "kv/media/block_arena.h"
#include "model/model.h"
#include "subcommands.h"
#include "synth/make_model.h"

namespace pg {
namespace {

KvLayout BenchLayout(const ModelConfig& c, int64_t page) { return c.KvLayoutFor(page, KvDtype::kF16); }

struct Arena {
  // device: the device executor's pages, device_blocks blocks (null: RAM of our own).
  Arena(const ModelConfig& c, int64_t page, int64_t n_seqs, int64_t tokens_per_seq, const KvPages* device = nullptr,
        int64_t device_blocks = 0) {
    blocks_per_seq = (tokens_per_seq + page - 1) / page;
    pages.layout = BenchLayout(c, page);
    pages.block_bytes = pages.layout.block_bytes();
    if (device) {
      PG_CHECK(blocks_per_seq * n_seqs <= device_blocks);
      pages = *device;
    } else {
      // In huge pages, as serve's device tier (HostBlockArena: AllocateLarge).
      const size_t bytes = pages.block_bytes * static_cast<size_t>(blocks_per_seq * n_seqs);
      mem.reset(static_cast<uint8_t*>(AllocateLarge(bytes)));
      PG_CHECK_MSG(mem != nullptr, "bench-model: out of memory for the KV arena");
      pages.base = mem.get();
    }
    table.resize(static_cast<size_t>(blocks_per_seq * n_seqs));
    std::iota(table.begin(), table.end(), 0);
  }
  const int32_t* table_of(int64_t seq) const { return table.data() + seq * blocks_per_seq; }
  KvPages pages;
  int64_t blocks_per_seq;
  LargeBuffer<uint8_t> mem;
  std::vector<int32_t> table;
};

constexpr int64_t kPage = 16;

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

struct Row {
  std::string test;
  Stat tps;
  std::vector<double> samples;       // tokens/s of each repetition
  double weight_bytes_per_step = 0;  // decode tests: matrix bytes a step read (0: not measured)
};

// Bytes of the matrices a decode step reads, as the file stores them (a
// repacked copy is within 3% of that): every dense matrix once (not
// token_embd: one row per token), and per_expert for each expert it runs.
struct WeightBytes {
  double dense = 0;
  double per_expert = 0;  // gate + up + down of one expert, averaged over the MoE layers
  int64_t moe_layers = 0;
};

WeightBytes WeightBytesOf(const Model& m) {
  auto bytes = [](const WeightMatrix& w) { return static_cast<double>(w.rows) * static_cast<double>(w.row_bytes); };
  WeightBytes b;
  b.dense = bytes(m.weights().output);
  for (const LayerWeights& L : m.weights().layers) {
    for (const WeightMatrix* w :
         {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down, &L.router, &L.gate_shexp, &L.up_shexp, &L.down_shexp})
      if (w->rows > 0) b.dense += bytes(*w);
    if (L.gate_exps.n_expert > 0) {
      ++b.moe_layers;
      b.per_expert += bytes(L.gate_exps.first) + bytes(L.up_exps.first) + bytes(L.down_exps.first);
    }
  }
  if (b.moe_layers > 0) b.per_expert /= static_cast<double>(b.moe_layers);
  return b;
}

// What the forward-pass runs share: the model, the pool, a scratch, the token stream.
struct Bench {
  const Model& m;
  ThreadPool& pool;
  int reps, n_prompt, n_gen;
  int depth = 0;              // context tokens before each test (-d)
  uint64_t fill_experts = 0;  // experts the untimed depth prefills ran (not a decode step's)
  ForwardScratch scratch;
  std::mt19937 rng{1234};
  std::uniform_int_distribution<int32_t> tok_dist;
  std::vector<float> logits;
  Executor* device = nullptr;          // --device cuda: the device executor, Prepare()d on device_kv
  const KvPages* device_kv = nullptr;  // its KV pages (device memory), device_blocks blocks
  int64_t device_blocks = 0;
  Bench(const Model& model, ThreadPool& p, int r, int np, int ng)
      : m(model),
        pool(p),
        reps(r),
        n_prompt(np),
        n_gen(ng),
        tok_dist(0, static_cast<int32_t>(model.config().n_vocab - 1)),
        logits(static_cast<size_t>(model.config().n_vocab * 16)) {}

  Status Step(std::span<const BatchSeq> batch, const Arena& a) {
    if (device) return device->Forward(batch).status();
    return m.Forward(batch, a.pages, pool, scratch, logits.data());
  }
  // Prefills `depth` random tokens into sequence `seq` of a, untimed, in
  // chunks of at most 512.
  Status Fill(const Arena& a, int64_t seq) {
    const uint64_t experts0 = scratch.experts_run();
    std::vector<int32_t> toks(static_cast<size_t>(depth));
    for (auto& t : toks) t = tok_dist(rng);
    for (int64_t p = 0; p < depth; p += 512) {
      const int64_t n = std::min<int64_t>(512, depth - p);
      BatchSeq b{toks.data() + p, n, p, a.table_of(seq), a.blocks_per_seq, false};
      PG_RETURN_IF_ERROR(Step({&b, 1}, a));
    }
    fill_experts += scratch.experts_run() - experts0;
    return Status::Ok();
  }
  double RunPrefill() {
    Arena a(m.config(), kPage, 1, depth + n_prompt, device_kv, device_blocks);
    if (!Fill(a, 0).ok()) return -1.0;
    std::vector<int32_t> toks(static_cast<size_t>(n_prompt));
    for (auto& t : toks) t = tok_dist(rng);
    BatchSeq b{toks.data(), n_prompt, depth, a.table_of(0), a.blocks_per_seq, true};
    double t0 = NowSeconds();
    Status st = Step({&b, 1}, a);
    double dt = NowSeconds() - t0;
    return st.ok() ? n_prompt / dt : -1.0;
  }
  // Batched decode of n_seqs sequences, n_gen steps, each after a 1-token
  // prompt (past `depth` tokens of context).
  double RunDecode(int64_t n_seqs) {
    Arena a(m.config(), kPage, n_seqs, depth + n_gen + 1, device_kv, device_blocks);
    for (int64_t s = 0; s < n_seqs; ++s)
      if (!Fill(a, s).ok()) return -1.0;
    std::vector<int32_t> toks(static_cast<size_t>(n_seqs));
    std::vector<BatchSeq> batch(static_cast<size_t>(n_seqs));
    double elapsed = 0;
    for (int64_t step = 0; step <= n_gen; ++step) {
      for (int64_t s = 0; s < n_seqs; ++s) {
        toks[s] = tok_dist(rng);
        batch[s] = BatchSeq{&toks[s], 1, depth + step, a.table_of(s), a.blocks_per_seq, true};
      }
      double t0 = NowSeconds();
      Status st = Step(batch, a);
      if (!st.ok()) return -1.0;
      if (step > 0) elapsed += NowSeconds() - t0;  // step 0 is the 1-token prompt
    }
    return static_cast<double>(n_seqs * n_gen) / elapsed;
  }
  template <typename Fn>
  void Measure(std::vector<Row>* rows, const std::string& name, Fn fn) {
    std::vector<double> v;
    const uint64_t experts0 = scratch.experts_run(), fill0 = fill_experts;
    for (int r = 0; r < reps; ++r) v.push_back(fn());
    rows->push_back({depth > 0 ? name + " @ d" + std::to_string(depth) : name, Summarize(v), v});
    if (name.rfind("pp", 0) == 0 || device) return;  // the device executor counts no experts
    // Decode: every step reads the dense matrices once and each expert it routed to once.
    const WeightBytes wb = WeightBytesOf(m);
    const double steps = static_cast<double>(reps) * (n_gen + 1);
    const double experts = static_cast<double>(scratch.experts_run() - experts0 - (fill_experts - fill0)) / steps;
    rows->back().weight_bytes_per_step = wb.dense + experts * wb.per_expert;
    if (wb.per_expert > 0)
      std::fprintf(stderr, "%s: %.1f experts per MoE layer and step, %.2f MB of weights per step\n", name.c_str(),
                   experts / static_cast<double>(wb.moe_layers), rows->back().weight_bytes_per_step / 1e6);
  }
};

// tg with speculative decoding (--spec ...): greedy, drafts verified per step.
// Plain tg and tg+spec alternate, so a shared machine's load hits both alike.
void MeasureSpec(Bench& b, SpeculativeDecoder& decoder, const std::string& spec_name, bool with_tg,
                 std::vector<Row>* rows) {
  const SpecConfig& spec = decoder.config();
  SpecDecodeResult total;
  std::vector<double> plain, with_spec;
  for (int r = 0; r < b.reps; ++r) {
    if (with_tg) plain.push_back(b.RunDecode(1));
    SpecDecodeResult s = RunSpecDecode(b.m, b.pool, decoder, b.n_gen, b.tok_dist(b.rng), b.rng());
    total.steps += s.steps;
    total.drafted += s.drafted;
    total.accepted += s.accepted;
    with_spec.push_back(s.tokens_per_s);
  }
  if (with_tg) rows->push_back({"tg" + std::to_string(b.n_gen), Summarize(plain)});
  rows->push_back({"tg" + std::to_string(b.n_gen) + "+spec", Summarize(with_spec)});
  if (with_tg)
    std::fprintf(stderr, "spec: tg+spec / tg = %.2fx\n", rows->back().tps.mean / (*rows)[rows->size() - 2].tps.mean);
  std::fprintf(stderr, "spec: %s, K=%d%s: %lld steps, %lld drafted, %lld accepted (rate %.3f, mean length %.2f)\n",
               spec_name.c_str(), spec.draft_max, spec.synthetic() ? ", SYNTHETIC acceptance" : "",
               static_cast<long long>(total.steps), static_cast<long long>(total.drafted),
               static_cast<long long>(total.accepted),
               total.drafted ? static_cast<double>(total.accepted) / static_cast<double>(total.drafted) : 0.0,
               total.steps ? 1.0 + static_cast<double>(total.accepted) / static_cast<double>(total.steps) : 0.0);
}

void PrintRows(const Model& m, const std::string& model_path, int threads, bool json, const std::vector<Row>& rows) {
  const ModelConfig& c = m.config();
  std::string types;
  for (const auto& t : m.source().tensors())
    if (t.name == "blk.0.attn_q.weight") types = TypeName(t.type);
  if (json) {
    nlohmann::json j;
    j["model"] = model_path;
    j["arch"] = c.arch;
    j["type"] = types;
    j["threads"] = threads;
    j["isa"] = IsaName(ActiveIsa());
    for (auto& r : rows)
      j["results"].push_back({{"test", r.test},
                              {"tokens_per_s", r.tps.mean},
                              {"stddev", r.tps.sd},
                              {"samples", r.samples},
                              {"weight_bytes_per_step", r.weight_bytes_per_step}});
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("| model | type | threads | isa | test | t/s |\n|---|---|---|---|---|---|\n");
  for (auto& r : rows)
    std::printf("| %s | %s | %d | %s | %s | %.2f ± %.2f |\n", c.name.c_str(), types.c_str(), threads,
                IsaName(ActiveIsa()), r.test.c_str(), r.tps.mean, r.tps.sd);
}

// --device cuda: the device executor and its KV arena in device memory, big
// enough for every test of b, bound once (the weights are uploaded here); b
// then runs on it.
struct DeviceRun {
  std::unique_ptr<BlockArena> arena;
  std::unique_ptr<Executor> executor;
  KvPages pages;
  int64_t blocks = 0;
};

Result<std::unique_ptr<DeviceRun>> OpenDevice(const EngineConfig& ec, const Model& m, ThreadPool& pool, Bench* b) {
  auto d = std::make_unique<DeviceRun>();
  const KvLayout layout = BenchLayout(m.config(), kPage);
  d->blocks =
      std::max<int64_t>((b->depth + b->n_prompt + kPage - 1) / kPage, 16 * ((b->depth + b->n_gen + kPage) / kPage));
  PG_ASSIGN_OR_RETURN(d->arena, ec.backend->MakeDeviceArena(d->blocks, layout.block_bytes()));
  PG_ASSIGN_OR_RETURN(d->executor, ec.backend->MakeExecutor(m, pool));
  d->pages.layout = layout;
  d->pages.base = d->arena->BlockPtr(0);
  d->pages.block_bytes =
      d->blocks > 1 ? static_cast<size_t>(d->arena->BlockPtr(1) - d->pages.base) : layout.block_bytes();
  PG_RETURN_IF_ERROR(d->executor->Prepare(d->pages));
  b->device = d->executor.get();
  b->device_kv = &d->pages;
  b->device_blocks = d->blocks;
  return d;
}

}  // namespace

int BenchModelMain(int argc, char** argv) {
  CLI::App app("Measure prefill and decode throughput (like llama-bench)", "prosgrow bench-model");
  std::string model_path;
  int threads = 0, reps = 3, n_prompt = 512, n_gen = 128, depth = 0;
  bool json = false, no_repack = false, precise = false;
  app.add_option("-m,--model", model_path, "GGUF model or Hugging Face model directory (default: the built-in model)");
  app.add_option("-t,--threads", threads, "threads (default: cores)")->check(CLI::Range(0, 1024));
  app.add_option("-r,--repetitions", reps, "repetitions per test")->check(CLI::Range(1, 100));
  app.add_option("-p,--n-prompt", n_prompt, "prompt tokens for pp")->check(CLI::Range(1, 1 << 16));
  app.add_option("-n,--n-gen", n_gen, "generated tokens for tg / batched decode")->check(CLI::Range(1, 1 << 16));
  app.add_option("-d,--depth", depth,
                 "tokens already in each sequence's context before a test (prefilled, untimed; as llama-bench -d)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("--no-repack", no_repack, "keep weights in the file's row-major layout (A/B of the repacked kernels)");
  app.add_flag("--precise", precise, "matrix products on f32 activations, row-major weights (--attn precise)");
  app.add_flag("--json", json, "print JSON");
  std::string attn_sparse = "sparse";
  app.add_option("--attn-sparse", attn_sparse,
                 "DSA models (glm-dsa): sparse (default; each query reads its indexer's top-k latent rows) | "
                 "dense-masked (every cached key scored, the unselected masked: the A/B of the sparse path)")
      ->check(CLI::IsMember({"sparse", "dense-masked"}));
  DeviceFlags device;
  AddDeviceFlags(app, &device);
  SpecFlags spec_flags;
  AddSpecFlags(app, &spec_flags);
  std::vector<std::string> tests = {"pp", "tg", "bd4", "bd16"};
  app.add_option("--tests", tests, "tests to run, e.g. --tests tg (tg+spec runs with --spec)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pp", "tg", "bd4", "bd16"}));
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  EngineConfig device_config;  // --device cuda: the device backend (ApplyDeviceFlags)
  if (Status st = ApplyDeviceFlags(device, &device_config); !st.ok()) return Fail("bench-model", st.message());
  const bool on_device = device_config.backend != nullptr;
  auto spec = ToSpecConfig(spec_flags);
  if (!spec.ok()) return Fail("bench-model", spec.status().message());
  if (on_device && spec->enabled()) return Fail("bench-model", "--spec runs on the CPU only; use --device cpu");
  if (model_path.empty()) {
    auto def = EnsureDefaultModel("");
    if (!def.ok()) return Fail("bench-model", def.status().message());
    model_path = *def;
  }
  ModelOptions options;
  options.repack_weights = !no_repack;
  if (precise) options = ModelOptionsFor(AttentionMode::kPrecise);
  options.sparse_attention = attn_sparse == "dense-masked" ? SparseAttention::kDenseMasked : SparseAttention::kSparse;
  auto model = Model::Load(model_path, options);
  if (!model.ok()) return Fail("bench-model", model.status().message());
  ThreadPool pool(threads);
  // --spec: the engine's speculative decoder (the draft model with a private KV pool for one sequence).
  std::unique_ptr<SpeculativeDecoder> decoder;
  if (spec->enabled()) {
    auto d = CreateBenchDecoder(**model, model_path, options, *spec, n_gen);
    if (!d.ok()) return Fail("bench-model", d.status().message());
    decoder = std::move(*d);
  }
  if (depth > 0 && spec->enabled()) return Fail("bench-model", "--depth does not apply to --spec runs");
  const int64_t n_ctx = model->get()->config().n_ctx_train;
  if (n_ctx > 0 && depth + std::max(n_prompt, n_gen + 1) > n_ctx)
    return Fail("bench-model",
                fmt::format("--depth {} + the test's tokens exceed the model's context ({})", depth, n_ctx));
  Bench b(**model, pool, reps, n_prompt, n_gen);
  b.depth = depth;
  auto dev = on_device ? OpenDevice(device_config, **model, pool, &b) : Result<std::unique_ptr<DeviceRun>>(nullptr);
  if (!dev.ok()) return Fail("bench-model", dev.status().message());
  b.RunDecode(1);  // warm-up: page in the weights
  std::vector<Row> rows;
  auto wanted = [&](const char* t) { return std::find(tests.begin(), tests.end(), t) != tests.end(); };
  if (wanted("pp")) b.Measure(&rows, "pp" + std::to_string(n_prompt), [&] { return b.RunPrefill(); });
  if (wanted("tg") && !decoder) b.Measure(&rows, "tg" + std::to_string(n_gen), [&] { return b.RunDecode(1); });
  if (wanted("bd4")) b.Measure(&rows, "bd4x" + std::to_string(n_gen), [&] { return b.RunDecode(4); });
  if (wanted("bd16")) b.Measure(&rows, "bd16x" + std::to_string(n_gen), [&] { return b.RunDecode(16); });
  if (decoder) MeasureSpec(b, *decoder, spec_flags.spec, wanted("tg"), &rows);
  PrintRows(**model, model_path, pool.size(), json, rows);
  return 0;
}

}  // namespace pg
