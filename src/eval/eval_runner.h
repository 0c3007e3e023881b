// RunEval: sends every (question, prompt style) of a GSM8K dataset to an
// OpenAI-compatible server, grades the completions and returns the report.
//
// Questions are the first `limit` rows of the dataset; styles run one after
// the other (all short prompts, then all long ones), each with `concurrency`
// requests in flight on a ThreadPool. A failed request is recorded with
// verdict "failed" and its error; nothing is retried.
//
// Thread-safety: RunEval may be called from any thread; it owns its workers.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "eval/eval_report.h"
#include "eval/gsm8k_dataset.h"
#include "eval/openai_client.h"

namespace pg {

struct EvalRunOptions {
  int limit = 128;                  // questions per style; capped at the dataset size
  std::vector<PromptStyle> styles;  // non-empty, no repeats
  int concurrency = 1;              // requests in flight, >= 1
  std::FILE* progress = nullptr;    // "\r done/total" lines go here when set (a TTY)
  std::string dataset_name;         // recorded in the report
};

Result<EvalReport> RunEval(const OpenAiClient& client, const Gsm8kDataset& dataset, const EvalRunOptions& options);

}  // namespace pg
