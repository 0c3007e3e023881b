// BenchRunner: drives a Workload against a server and collects one
// RequestRecord per request.
//
// Closed loop (default): `concurrency` root sessions are in flight; each
// worker takes the next session index k, replays its events (waiting the
// think/tool gaps, spawning sub-agent children on their own threads) and
// takes the next session when it ends. Open loop: each session is started at
// its first event's arrival time, whatever is in flight.
// Stopping: after `duration_s` seconds or after `warmup + max_requests`
// requests were issued, no new request starts (those in flight finish);
// with neither, every session of one pass runs once. The first `warmup`
// requests issued are flagged and left out of the summary (their prompts
// still count as seen for the ideal reuse).
// Thread-safety: Run() is called once; it owns every thread it starts.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "bench/request_record.h"
#include "bench/stream_client.h"
#include "bench/workload.h"

namespace pg::bench {

struct RunOptions {
  int32_t concurrency = 4;
  double duration_s = 0;     // 0: no time limit
  int64_t max_requests = 0;  // measured requests; 0: no count limit
  int64_t warmup = 0;
  bool open_loop = false;
  int64_t ideal_block_tokens = 16;
  bool progress = false;  // live progress line on stderr (TTY)
  int32_t max_open_loop_inflight = 1024;
};

struct RunResult {
  std::vector<RequestRecord> records;  // sorted by index (send order)
  double wall_s = 0;
};

Result<RunResult> RunBench(const Workload& workload, const ClientOptions& client, const RunOptions& opt);

}  // namespace pg::bench
