#include "bench/bench_cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/cli_util.h"
#include "bench/bench_plots.h"
#include "bench/bench_runner.h"
#include "bench/output_match.h"
#include "bench/reference_points.h"
#include "bench/run_report.h"
#include "bench/spec_report.h"
#include "bench/stream_client.h"
#include "bench/workload.h"

namespace pg {
namespace {

using namespace pg::bench;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int64_t kDefaultVocab = 1000;

struct RunFlags {
  std::string url, api_key, model, workload, out_dir, label, reference, prompt_mode = "tokens";
  std::string metrics_counter = "prosgrow_prompt_tokens_cached_total";
  int32_t concurrency = 4;
  double duration_s = 0;
  int64_t max_requests = 0;
  int64_t warmup = 0;
  uint64_t seed = 1;
  double gpus = 1;
  double gpu_hour_cost = 0;
  int64_t vocab_size = 0;
  int64_t ideal_block = 16;
  double timeout_s = 600;
  bool open_loop = false;
  bool no_ignore_eos = false;
  bool no_progress = false;
  std::vector<int32_t> sweep;
  WorkloadOptions wl;
};

struct CompareFlags {
  std::vector<std::string> files;
  std::string plots_dir, reference, out_file;
};

int Fail(const Status& s, int code) {
  std::fprintf(stderr, "prosgrow bench: %s\n", s.message().c_str());
  return code;
}

Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create directory " + dir + ": " + ec.message());
  return Status::Ok();
}

std::string Join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// Sum of the cached-tokens counter on /metrics, nullopt when not exposed.
std::optional<double> ScrapeCounter(StreamClient& client, const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto body = client.Get("/metrics");
  if (!body.ok()) return std::nullopt;
  auto v = PrometheusCounter(*body, name);
  if (!v.ok()) return std::nullopt;
  return *v;
}

// prosgrow's per-drafter speculative counters on /metrics; empty when absent.
std::map<std::string, SpecCounts> ScrapeSpecCounters(StreamClient& client) {
  auto body = client.Get("/metrics");
  if (!body.ok()) return {};
  return SpecCountersFromMetrics(*body);
}

// What one `bench run` sets up before its first level: the client, the
// server's model and vocabulary, the workload.
struct RunSetup {
  ClientOptions copt;
  std::unique_ptr<StreamClient> probe;
  std::vector<ReferencePoint> refs;
  int64_t vocab = 0;
  std::string vocab_source;
  std::optional<TokenSpace> space;
  std::unique_ptr<Workload> workload;
};

Status ValidateRunFlags(const RunFlags& f) {
  if (f.url.empty()) return InvalidArgument("--url is required (or use `bench compare`)");
  if (f.workload.empty()) return InvalidArgument("--workload is required");
  if (!(f.gpus > 0)) return InvalidArgument("--gpus must be > 0");
  if (f.gpu_hour_cost < 0) return InvalidArgument("--gpu-hour-cost must be >= 0");
  for (int32_t c : f.sweep) {
    if (c < 1 || c > 4096) return InvalidArgument(fmt::format("--sweep-concurrency level {} not in [1, 4096]", c));
  }
  return Status::Ok();
}

// Fills *s; 0 when ready, else the exit code (the error printed).
int SetUpRun(RunFlags& f, RunSetup* s) {
  if (Status st = ValidateRunFlags(f); !st.ok()) return Fail(st, kExitUsage);
  auto mode = ParsePromptMode(f.prompt_mode);
  if (!mode.ok()) return Fail(mode.status(), kExitUsage);
  s->copt.url = f.url;
  s->copt.api_key = f.api_key;
  s->copt.model = f.model;
  s->copt.mode = *mode;
  s->copt.timeout_s = f.timeout_s;
  s->copt.ignore_eos = !f.no_ignore_eos;
  auto probe = StreamClient::Create(s->copt);
  if (!probe.ok()) return Fail(probe.status(), kExitUsage);
  s->probe = std::move(*probe);
  if (!f.reference.empty()) {
    auto r = LoadReferenceCsv(f.reference);
    if (!r.ok()) return Fail(r.status(), kExitUsage);
    s->refs = std::move(*r);
  }
  // The server must answer /v1/models; it names the model and maybe the vocabulary.
  auto models = s->probe->Get("/v1/models");
  if (!models.ok()) return Fail(Unavailable("cannot reach server: " + models.status().message()), kExitFailed);
  if (s->copt.model.empty()) {
    if (auto id = QueryModelId(*s->probe); id.ok()) s->copt.model = *id;
  }
  s->vocab = f.vocab_size;
  s->vocab_source = "--vocab-size";
  if (s->vocab <= 0) {
    auto v = QueryVocabSize(*s->probe);
    s->vocab = v.ok() ? *v : kDefaultVocab;
    s->vocab_source = v.ok() ? "/v1/models" : "default";
  }
  auto space = TokenSpace::ForVocab(s->vocab, f.seed);
  if (!space.ok()) return Fail(space.status(), kExitUsage);
  s->space = *space;
  f.wl.seed = f.seed;
  f.wl.concurrency = f.sweep.empty() ? f.concurrency : f.sweep.back();
  auto workload = MakeWorkload(f.workload, *s->space, f.wl);
  if (!workload.ok()) return Fail(workload.status(), kExitUsage);
  s->workload = std::move(*workload);
  if (!f.out_dir.empty()) {
    if (Status st = EnsureDir(f.out_dir); !st.ok()) return Fail(st, kExitFailed);
  }
  return 0;
}

nlohmann::json RunConfigJson(const RunFlags& f, const RunSetup& s, int32_t level, double wall_s,
                             double started_unix_s) {
  return {{"url", f.url},
          {"model", s.copt.model},
          {"workload", f.workload},
          {"workload_description", s.workload->Describe()},
          {"prompt_mode", PromptModeName(s.copt.mode)},
          {"concurrency", level},
          {"open_loop", f.open_loop},
          {"duration_s", f.duration_s},
          {"max_requests", f.max_requests},
          {"warmup", f.warmup},
          {"seed", f.seed},
          {"vocab_size", s.vocab},
          {"vocab_source", s.vocab_source},
          {"token_id_lo", s.space->lo()},
          {"token_id_hi", s.space->hi()},
          {"ideal_block_tokens", f.ideal_block},
          {"gpus", f.gpus},
          {"wall_s", wall_s},
          {"ignore_eos", s.copt.ignore_eos},
          {"started_unix_s", started_unix_s}};
}

// One concurrency level: the run, its /metrics deltas, its tables and its run JSON.
int RunLevel(const RunFlags& f, RunSetup& s, int32_t level, RunReport* rep) {
  RunOptions ropt;
  ropt.concurrency = level;
  ropt.duration_s = f.duration_s;
  ropt.max_requests = f.max_requests;
  ropt.warmup = f.warmup;
  ropt.open_loop = f.open_loop;
  ropt.ideal_block_tokens = f.ideal_block;
  ropt.progress = !f.no_progress && isatty(STDERR_FILENO);
  auto before = ScrapeCounter(*s.probe, f.metrics_counter);
  const auto spec_before = ScrapeSpecCounters(*s.probe);
  // Wall-clock start, so a run's send_s can be lined up with outside events
  // (scripts/failover_report.py: when a replica was killed).
  const double started_unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto run = RunBench(*s.workload, s.copt, ropt);
  if (!run.ok()) return Fail(run.status(), kExitUsage);
  auto after = ScrapeCounter(*s.probe, f.metrics_counter);
  const auto spec_after = ScrapeSpecCounters(*s.probe);
  SummaryInputs in;
  in.gpus = f.gpus;
  in.gpu_hour_cost = f.gpu_hour_cost;
  in.concurrency = level;
  in.workload = f.workload;
  in.label =
      f.label.empty() ? fmt::format("c{}", level) : (f.sweep.empty() ? f.label : fmt::format("{} c{}", f.label, level));
  // The /metrics delta also counts warmup requests, so it is only used without warmup.
  if (before && after && f.warmup == 0) in.metrics_cached_delta = *after - *before;
  in.spec_by_drafter = SpecCountersDelta(spec_before, spec_after);
  rep->summary = Summarize(run->records, in);
  rep->records = std::move(run->records);
  rep->config = RunConfigJson(f, s, level, run->wall_s, started_unix_s);
  std::printf("\n%s\n", SummaryTable({rep->summary}).c_str());
  if (std::string t = SpecTable(rep->summary.spec); !t.empty()) std::printf("%s\n", t.c_str());
  if (auto m = s.probe->Get("/metrics"); m.ok()) {  // the server's KV accounting (miss reasons, what-if)
    rep->config["kv_accounting"] = KvAccountingFromMetrics(*m);
    if (std::string t = KvAccountingTable(rep->config["kv_accounting"]); !t.empty()) std::printf("%s\n", t.c_str());
  }
  for (const RequestRecord& r : rep->records) {
    if (!r.ok && !r.warmup) {
      std::printf("first failure: request %lld (%s): %s\n", static_cast<long long>(r.index), r.session.c_str(),
                  r.error.c_str());
      break;
    }
  }
  if (!f.out_dir.empty()) {
    std::string name = f.sweep.empty() ? "run.json" : fmt::format("run-c{}.json", level);
    if (Status st = WriteTextFile(Join(f.out_dir, name), RunReportToJson(*rep).dump(1)); !st.ok())
      return Fail(st, kExitFailed);
  }
  return 0;
}

// The sweep's summary: printed, and with --out the summary.md and plots.
int WriteRunSummary(const RunFlags& f, const RunSetup& s, const std::vector<RunReport>& reports, size_t levels) {
  std::vector<Summary> sums;
  for (const RunReport& r : reports) sums.push_back(r.summary);
  std::string md = SummaryTable(sums);
  std::string ref_md = s.refs.empty() ? "" : ReferenceTable(sums, s.refs);
  if (!reports.empty() && reports.back().config.contains("kv_accounting")) {
    if (std::string t = KvAccountingTable(reports.back().config["kv_accounting"]); !t.empty()) md += "\n" + t;
  }
  if (!reports.empty()) {
    if (std::string t = SpecTable(reports.back().summary.spec); !t.empty()) md += "\n" + t;
  }
  if (levels > 1) std::printf("\n%s\n", md.c_str());
  if (!ref_md.empty()) std::printf("\n%s\n", ref_md.c_str());
  if (!ref_md.empty()) md += "\n" + ref_md;
  if (f.out_dir.empty()) return 0;
  Curve curve{f.label.empty() ? f.workload : f.label, sums};
  Status st = WriteTextFile(Join(f.out_dir, "summary.md"), md);
  if (st.ok())
    st =
        WriteTextFile(Join(f.out_dir, "throughput_vs_interactivity.svg"), ThroughputInteractivityPlot({curve}, s.refs));
  if (st.ok()) st = WriteTextFile(Join(f.out_dir, "ttft_cdf.svg"), TtftCdfPlot(reports));
  if (st.ok()) st = WriteTextFile(Join(f.out_dir, "cache_reuse_over_time.svg"), CacheReuseOverTimePlot(reports.back()));
  if (!st.ok()) return Fail(st, kExitFailed);
  std::printf("wrote %s/{%s, summary.md, *.svg}\n", f.out_dir.c_str(), f.sweep.empty() ? "run.json" : "run-c*.json");
  return 0;
}

int RunCommand(RunFlags& f) {
  RunSetup s;
  if (int rc = SetUpRun(f, &s); rc != 0) return rc;
  std::printf("workload: %s\nserver: %s  model: %s  prompt mode: %s  vocab %lld (%s), token ids [%d, %d)\n",
              s.workload->Describe().c_str(), f.url.c_str(), s.copt.model.empty() ? "(unnamed)" : s.copt.model.c_str(),
              PromptModeName(s.copt.mode), static_cast<long long>(s.vocab), s.vocab_source.c_str(), s.space->lo(),
              s.space->hi());
  std::vector<int32_t> levels = f.sweep.empty() ? std::vector<int32_t>{f.concurrency} : f.sweep;
  std::vector<RunReport> reports;
  int64_t completed = 0;
  for (int32_t level : levels) {
    RunReport rep;
    if (int rc = RunLevel(f, s, level, &rep); rc != 0) return rc;
    completed += rep.summary.completed;
    reports.push_back(std::move(rep));
  }
  if (int rc = WriteRunSummary(f, s, reports, levels.size()); rc != 0) return rc;
  if (completed == 0) return Fail(Unavailable("no request completed"), kExitFailed);
  return 0;
}

int CompareCommand(const CompareFlags& f) {
  if (f.files.size() < 2) return Fail(InvalidArgument("compare needs at least two run JSON files"), kExitUsage);
  std::vector<RunReport> runs;
  for (const std::string& path : f.files) {
    auto r = LoadRunReport(path);
    if (!r.ok()) return Fail(r.status(), kExitUsage);
    if (r->summary.label.empty()) r->summary.label = std::filesystem::path(path).stem().string();
    runs.push_back(std::move(*r));
  }
  std::vector<ReferencePoint> refs;
  if (!f.reference.empty()) {
    auto r = LoadReferenceCsv(f.reference);
    if (!r.ok()) return Fail(r.status(), kExitUsage);
    refs = std::move(*r);
  }
  std::vector<Summary> sums;
  std::vector<Curve> curves;
  for (const RunReport& r : runs) {
    sums.push_back(r.summary);
    curves.push_back({r.summary.label, {r.summary}});
  }
  std::string md = SummaryTable(sums);
  // Greedy decoding on the same workload: the same request must give the same text.
  for (size_t i = 1; i < runs.size(); ++i) {
    md += fmt::format("\n{} vs {}: {}\n", runs[i].summary.label, runs[0].summary.label,
                      DescribeOutputMatch(MatchOutputs(runs[0].records, runs[i].records)));
  }
  for (const Summary& s : sums) {
    if (std::string t = SpecTable(s.spec); !t.empty()) md += "\n" + s.label + ":\n\n" + t;
  }
  if (!refs.empty()) md += "\n" + ReferenceTable(sums, refs);
  std::printf("%s", md.c_str());
  if (!f.out_file.empty()) {
    if (Status s = WriteTextFile(f.out_file, md); !s.ok()) return Fail(s, kExitFailed);
  }
  if (!f.plots_dir.empty()) {
    Status st = EnsureDir(f.plots_dir);
    if (st.ok())
      st = WriteTextFile(Join(f.plots_dir, "throughput_vs_interactivity.svg"),
                         ThroughputInteractivityPlot(curves, refs));
    if (st.ok()) st = WriteTextFile(Join(f.plots_dir, "ttft_cdf.svg"), TtftCdfPlot(runs));
    for (size_t i = 0; st.ok() && i < runs.size(); ++i) {
      st = WriteTextFile(Join(f.plots_dir, fmt::format("cache_reuse_over_time_{}.svg", i + 1)),
                         CacheReuseOverTimePlot(runs[i]));
    }
    if (!st.ok()) return Fail(st, kExitFailed);
  }
  return 0;
}

}  // namespace

int BenchMain(int argc, char** argv) {
  CLI::App app{"Benchmark an OpenAI-compatible server with agentic workloads and print the reference table.",
               "prosgrow bench"};
  RunFlags f;
  app.add_option("--url", f.url, "server root, e.g. http://127.0.0.1:8080");
  app.add_option("--api-key", f.api_key, "sent as Authorization: Bearer KEY");
  app.add_option("--model", f.model, "model name (default: first of /v1/models)");
  app.add_option("--workload", f.workload, "agentic | trace:kv-cache-tester:DIR_OR_FILE | trace:mooncake:FILE");
  app.add_option("--concurrency", f.concurrency, "sessions in flight (closed loop)")->capture_default_str();
  auto* dur = app.add_option("--duration", f.duration_s, "seconds after which no new request starts");
  auto* maxr = app.add_option("--max-requests", f.max_requests, "measured requests to issue");
  dur->excludes(maxr);
  app.add_option("--warmup", f.warmup, "first N requests excluded from the statistics")->capture_default_str();
  app.add_option("--seed", f.seed, "workload seed (content and agentic draws)")->capture_default_str();
  app.add_option("--gpus", f.gpus, "GPUs behind the server, for tok/s per GPU (1 on CPU)")->capture_default_str();
  app.add_option("--out", f.out_dir, "directory for run JSON, summary.md and SVG plots");
  app.add_option("--label", f.label, "name of this configuration in tables and plots");
  app.add_option("--prompt-mode", f.prompt_mode, "tokens (ids to /v1/completions) | text | chat")
      ->capture_default_str();
  app.add_option("--vocab-size", f.vocab_size, "server vocabulary (default: /v1/models, else 1000)");
  app.add_option("--ctx-max", f.wl.ctx_max, "agentic: max context per session, tokens")->capture_default_str();
  app.add_option("--turns", f.wl.turns, "agentic: requests per session")->capture_default_str();
  app.add_option("--tool-gap-s", f.wl.tool_gap_s, "agentic: mean think/tool gap between turns, s")
      ->capture_default_str();
  app.add_option("--sessions", f.wl.sessions, "agentic: sessions per pass (default 2 x concurrency)");
  app.add_option("--out-median", f.wl.out_median, "agentic: median reply length, tokens")->capture_default_str();
  app.add_option("--length-scale", f.wl.length_scale, "traces: multiply block and output lengths")
      ->capture_default_str();
  app.add_option("--time-scale", f.wl.time_scale, "traces: multiply think times and arrival times")
      ->capture_default_str();
  app.add_option("--max-context", f.wl.max_context, "traces: cut sessions at prompt+output > N tokens (0: no cap)");
  app.add_flag("--open-loop", f.open_loop, "mooncake: send at trace timestamps instead of closed loop");
  app.add_option("--sweep-concurrency", f.sweep, "run each concurrency level, e.g. 1,2,4,8")->delimiter(',');
  app.add_option("--gpu-hour-cost", f.gpu_hour_cost, "USD per GPU-hour: adds $ per million output tokens");
  app.add_option("--reference", f.reference, "CSV of published reference points");
  app.add_option("--ideal-block", f.ideal_block, "block size of the ideal-reuse computation, tokens")
      ->capture_default_str();
  app.add_option("--timeout", f.timeout_s, "per-request read timeout, s")->capture_default_str();
  app.add_option("--metrics-counter", f.metrics_counter, "Prometheus counter of cached prompt tokens on /metrics")
      ->capture_default_str();
  app.add_flag("--no-ignore-eos", f.no_ignore_eos, "do not send ignore_eos: true");
  app.add_flag("--no-progress", f.no_progress, "no live progress line");

  CompareFlags cf;
  auto* cmp = app.add_subcommand("compare", "Side-by-side table of saved runs with ratios to the first (B/A).");
  cmp->add_option("files", cf.files, "run JSON files (run.json from --out)")->required();
  cmp->add_option("--plots", cf.plots_dir, "write throughput/interactivity, TTFT CDF and cache-reuse SVGs here");
  cmp->add_option("--reference", cf.reference, "CSV of published reference points");
  cmp->add_option("--out", cf.out_file, "also write the Markdown table to this file");
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  if (cmp->parsed()) return CompareCommand(cf);
  return RunCommand(f);
}

}  // namespace pg
