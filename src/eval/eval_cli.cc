#include "eval/eval_cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "eval/eval_compare.h"
#include "eval/eval_report.h"
#include "eval/eval_runner.h"
#include "eval/gsm8k_dataset.h"
#include "eval/openai_client.h"

namespace pg {
namespace {

constexpr int kExitRegression = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRequestsFailed = 3;

int Fail(const std::string& message) {
  std::fprintf(stderr, "prosgrow eval: error: %s\n", message.c_str());
  return kExitUsage;
}

// Parses argv with app; returns -1 to continue, or the exit code.
int Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    for (char& c : what) c = (c == '\n') ? ' ' : c;
    std::fprintf(stderr, "prosgrow eval: %s (see --help)\n", what.c_str());
    return kExitUsage;
  }
  return -1;
}

int CompareMain(int argc, char** argv) {
  CLI::App app(
      "Compare two `prosgrow eval` runs (BASE = baseline, OPT = optimized): accuracy, answer "
      "flips and identical-output rate per prompt style.",
      "prosgrow eval compare");
  std::string base_path, opt_path, out_path;
  bool fail_on_flip = false;
  app.add_option("BASE", base_path, "results.json of the baseline run")->required();
  app.add_option("OPT", opt_path, "results.json of the optimized run")->required();
  app.add_flag("--fail-on-flip", fail_on_flip,
               "exit 1 if any baseline-correct answer is wrong (or its request failed) in OPT");
  app.add_option("--out", out_path, "also write the comparison (Markdown) to this file");
  if (int rc = Parse(app, argc, argv); rc >= 0) return rc;

  Result<EvalReport> base = LoadReport(base_path);
  if (!base.ok()) return Fail(base.status().message());
  Result<EvalReport> opt = LoadReport(opt_path);
  if (!opt.ok()) return Fail(opt.status().message());
  Result<Comparison> cmp = CompareReports(*base, *opt);
  if (!cmp.ok()) return Fail(cmp.status().message());
  std::string text = FormatComparison(*cmp, base_path, opt_path);
  std::fputs(text.c_str(), stdout);
  if (!out_path.empty()) {
    std::FILE* f = std::fopen(out_path.c_str(), "wb");
    if (f == nullptr) return Fail(fmt::format("cannot write {}: {}", out_path, std::strerror(errno)));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) return Fail(fmt::format("error writing {}", out_path));
  }
  return fail_on_flip && cmp->HasRegression() ? kExitRegression : 0;
}

// The flags of `prosgrow eval` (run).
struct RunArgs {
  ClientConfig client;
  std::string dataset_path, out_dir, prompts = "both", endpoint = "chat";
  int limit = 128;
  int concurrency = 1;
};

void AddRunOptions(CLI::App& app, RunArgs& a) {
  ClientConfig& client = a.client;
  app.add_option("--url", client.url, "server base URL, e.g. http://127.0.0.1:8080")->required();
  app.add_option("--api-key", client.api_key, "sent as 'Authorization: Bearer KEY'");
  app.add_option("--model", client.model, "model name (default: the first of GET /v1/models)");
  app.add_option("--dataset", a.dataset_path, "GSM8K-format JSONL file ({\"question\", \"answer\": \"... #### N\"})")
      ->required();
  app.add_option("--limit", a.limit, "questions per prompt style (the first N rows)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--prompts", a.prompts, "prompt styles: short (zero-shot), long (8-shot shared prefix) or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"short", "long", "both"}));
  app.add_option("--concurrency", a.concurrency, "requests in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--max-tokens", client.max_tokens, "max completion tokens per request")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--temperature", client.temperature, "sampling temperature (0 = greedy)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--endpoint", a.endpoint, "chat (/v1/chat/completions) or completions (/v1/completions)")
      ->capture_default_str()
      ->check(CLI::IsMember({"chat", "completions"}));
  app.add_option("--timeout", client.timeout_s, "per-request timeout, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--out", a.out_dir, "write DIR/results.json and DIR/summary.md");
}

EvalRunOptions RunOptionsOf(const RunArgs& a) {
  EvalRunOptions options;
  options.limit = a.limit;
  options.concurrency = a.concurrency;
  options.dataset_name = a.dataset_path;
  if (a.prompts == "short" || a.prompts == "both") options.styles.push_back(PromptStyle::kShort);
  if (a.prompts == "long" || a.prompts == "both") options.styles.push_back(PromptStyle::kLong);
  if (isatty(STDERR_FILENO)) options.progress = stderr;
  return options;
}

// The client; without --model, named after the server's first model (or
// none, with a warning, when /v1/models does not answer).
Result<OpenAiClient> MakeClient(ClientConfig& client) {
  Result<OpenAiClient> made = OpenAiClient::Create(client);
  if (!made.ok() || !client.model.empty()) return made;
  Result<std::string> id = made->FirstModelId();
  if (id.ok()) {
    client.model = *id;
    return OpenAiClient::Create(client);
  }
  std::fprintf(stderr, "prosgrow eval: no --model and %s; sending requests without a model name\n",
               id.status().message().c_str());
  return made;
}

// kExitRequestsFailed (with a line naming the first error) when any request failed.
int ExitCodeOf(const EvalReport& report) {
  int failed = 0;
  std::string first_error;
  for (const QuestionResult& r : report.results) {
    if (r.verdict != Verdict::kFailed) continue;
    if (failed++ == 0) first_error = r.error;
  }
  if (failed > 0) {
    std::fprintf(stderr, "prosgrow eval: %d of %zu requests failed (first: %s)\n", failed, report.results.size(),
                 first_error.c_str());
    return kExitRequestsFailed;
  }
  return 0;
}

int RunMain(int argc, char** argv) {
  CLI::App app("Math quality check (GSM8K) against an OpenAI-compatible server, with verified answers.",
               "prosgrow eval");
  app.footer(
      "Compare two runs with: prosgrow eval compare BASE.json OPT.json [--fail-on-flip]\n"
      "Exit codes: 0 ok, 2 bad arguments or input, 3 some requests failed.");
  RunArgs args;
  AddRunOptions(app, args);
  if (int rc = Parse(app, argc, argv); rc >= 0) return rc;

  args.client.endpoint = *ParseCompletionEndpoint(args.endpoint);
  const EvalRunOptions options = RunOptionsOf(args);
  Result<Gsm8kDataset> dataset = Gsm8kDataset::Load(args.dataset_path);
  if (!dataset.ok()) return Fail(dataset.status().message());
  if (static_cast<size_t>(args.limit) > dataset->size()) {
    std::fprintf(stderr, "prosgrow eval: --limit %d exceeds the %zu rows of %s; using all %zu\n", args.limit,
                 dataset->size(), args.dataset_path.c_str(), dataset->size());
  }
  const std::string& out_dir = args.out_dir;
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return Fail(fmt::format("cannot create output directory {}: {}", out_dir, ec.message()));
  }
  Result<OpenAiClient> made = MakeClient(args.client);
  if (!made.ok()) return Fail(made.status().message());

  Result<EvalReport> report = RunEval(*made, *dataset, options);
  if (!report.ok()) return Fail(report.status().message());
  std::fputs(FormatAccuracyLines(*report).c_str(), stdout);
  if (!out_dir.empty()) {
    Status written = WriteReport(*report, out_dir);
    if (!written.ok()) return Fail(written.message());
    std::printf("wrote %s/results.json and %s/summary.md\n", out_dir.c_str(), out_dir.c_str());
  }
  return ExitCodeOf(*report);
}

}  // namespace

int EvalMain(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "compare") == 0) return CompareMain(argc - 1, argv + 1);
  return RunMain(argc, argv);
}

}  // namespace pg
