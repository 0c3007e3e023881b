#include "eval/eval_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "base/clock.h"
#include "base/thread_pool.h"

namespace pg {

Result<EvalReport> RunEval(const OpenAiClient& client, const Gsm8kDataset& dataset, const EvalRunOptions& options) {
  if (options.limit <= 0) return InvalidArgument("--limit must be positive");
  if (options.concurrency <= 0) return InvalidArgument("--concurrency must be positive");
  if (options.styles.empty()) return InvalidArgument("no prompt style selected");
  bool need_long = std::find(options.styles.begin(), options.styles.end(), PromptStyle::kLong) != options.styles.end();
  PG_ASSIGN_OR_RETURN(PromptBuilder builder, PromptBuilder::Create(&dataset, need_long));

  const int n_questions = std::min<int>(options.limit, static_cast<int>(dataset.size()));
  EvalReport report;
  report.styles = options.styles;
  EvalSettings& st = report.settings;
  st.url = client.config().url;
  st.model = client.config().model;
  st.endpoint = CompletionEndpointName(client.config().endpoint);
  st.dataset = options.dataset_name;
  st.limit = n_questions;
  st.max_tokens = client.config().max_tokens;
  st.temperature = client.config().temperature;
  st.concurrency = options.concurrency;

  // One slot per (style, question), filled by the workers.
  for (PromptStyle style : options.styles) {
    for (int i = 0; i < n_questions; ++i) {
      const Gsm8kRow& row = dataset.rows()[i];
      QuestionResult r;
      r.index = row.index;
      r.style = style;
      r.question = row.question;
      r.prompt = builder.Build(style, row);
      r.reference = row.reference;
      report.results.push_back(std::move(r));
    }
  }

  const int64_t total = static_cast<int64_t>(report.results.size());
  std::atomic<int64_t> next{0};
  std::mutex progress_mu;
  int64_t done = 0;
  int64_t failed = 0;
  double start = NowSeconds();
  ThreadPool pool(static_cast<int>(std::min<int64_t>(options.concurrency, total)));
  pool.RunOnAll([&](int, int) {
    for (int64_t k = next.fetch_add(1); k < total; k = next.fetch_add(1)) {
      QuestionResult& r = report.results[k];
      CompletionResult reply = client.Complete(r.prompt);
      r.latency_s = reply.latency_s;
      r.finish_reason = reply.finish_reason;
      r.completion_tokens = reply.completion_tokens;
      if (reply.ok) {
        GradeCompletion(reply.text, &r);
      } else {
        r.verdict = Verdict::kFailed;
        r.error = reply.error;
      }
      if (options.progress != nullptr) {
        std::lock_guard<std::mutex> lock(progress_mu);
        ++done;
        if (!reply.ok) ++failed;
        std::fprintf(options.progress, "\reval: %lld/%lld requests done, %lld failed, %.0f s",
                     static_cast<long long>(done), static_cast<long long>(total), static_cast<long long>(failed),
                     NowSeconds() - start);
        std::fflush(options.progress);
      }
    }
  });
  if (options.progress != nullptr) std::fprintf(options.progress, "\n");
  st.wall_s = NowSeconds() - start;
  return report;
}

}  // namespace pg
