// RequestRecord: what the bench measured for one request, and its JSON form.
// Times are seconds; counts are tokens. -1 means "not reported" (printed as
// "n/a"), never a guess. Thread-safety: value type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pg::bench {

struct RequestRecord {
  int64_t index = 0;    // send order within the run
  std::string session;  // session label ("trace_0019#0", "agentic#3/sub0")
  int32_t turn = 0;     // request number within its session
  bool warmup = false;  // excluded from the summary
  bool ok = false;
  std::string error;          // one line when !ok
  int32_t http_status = 0;    // 0 when no response arrived
  std::string served_by;      // the replica behind `prosgrow route` (its X-Prosgrow-Replica), "" direct
  double send_s = 0;          // send time, seconds since the run started
  double ttft_s = -1;         // send -> first output chunk
  double e2e_s = -1;          // send -> end of stream
  std::vector<double> itl_s;  // gaps between successive output chunks
  int32_t max_tokens = 0;
  int64_t sent_prompt_tokens = 0;   // tokens of the prompt as built (our token space)
  int64_t ideal_cached_tokens = 0;  // PrefixReuseTracker::Observe of the prompt
  int64_t prompt_tokens = -1;       // server-reported (usage or timings)
  int64_t output_tokens = -1;       // usage.completion_tokens, else chunk count
  bool output_from_usage = false;
  int64_t output_chunks = 0;
  int64_t cached_tokens = -1;  // -1: n/a
  std::string cached_source;   // "usage", "timings" or ""
  int64_t cached_device = -1;  // usage.prompt_tokens_details.cached_tokens_by_tier
  int64_t cached_host = -1;
  int64_t cached_disk = -1;
  int64_t cached_remote = -1;  // ... "remote" (Redis/Valkey tier); -1 when the server reports none
  std::string finish_reason;
  std::string output_hash;  // OutputHash of the streamed text (output_match.h)
  // Speculative decoding (spec_report.h): usage.speculative, else llama.cpp timings.draft_n*.
  int64_t spec_steps = -1;      // verification steps that carried a draft; -1: n/a
  int64_t spec_drafted = -1;    // draft tokens verified; -1: n/a
  int64_t spec_accepted = -1;   // draft tokens accepted; -1: n/a
  bool spec_synthetic = false;  // benchmark-only synthetic acceptance: not the model's output
  std::string spec_source;      // "usage", "timings" or "" (not reported)
};

nlohmann::json RecordToJson(const RequestRecord& r);
// Missing fields keep their defaults; wrong types are ignored.
RequestRecord RecordFromJson(const nlohmann::json& j);

}  // namespace pg::bench
