// Workload: a deterministic source of agent sessions to replay against a
// server. A session is a script of requests separated by waits (think / tool
// time), possibly spawning child sessions (sub-agents) that run concurrently
// with their parent. Everything a workload produces depends only on its
// configuration (files, flags, --seed) and the session index k.
// Thread-safety: MakeSession is const and may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/token_space.h"

namespace pg::bench {

struct SessionScript;

// One step of a session.
struct SessionEvent {
  enum class Kind { kRequest, kSpawn };
  Kind kind = Kind::kRequest;
  // Seconds to wait before this event, after the previous event of the same
  // session finished (request completed, or child spawned).
  double wait_before_s = 0;
  // Open-loop arrival time (seconds from run start); < 0 when unused.
  double arrival_s = -1;
  // kRequest: the full prompt (token ids in the workload's TokenSpace) and
  // the number of output tokens asked for.
  std::vector<int32_t> prompt;
  int32_t max_tokens = 1;
  // kSpawn: index into SessionScript::children.
  int32_t child = -1;
};

struct SessionScript {
  std::string label;  // e.g. "trace_0019#1" (trace, instance) or "agentic#7"
  std::vector<SessionEvent> events;
  std::vector<SessionScript> children;  // sub-agents started by kSpawn events
};

class Workload {
 public:
  virtual ~Workload() = default;
  // One line: kind and key parameters.
  virtual std::string Describe() const = 0;
  // Root sessions in one pass over the workload (run once when neither
  // --duration nor --max-requests is given).
  virtual int64_t SessionsPerPass() const = 0;
  // Whether MakeSession(k) is defined for k >= SessionsPerPass()
  // (recycling with fresh content).
  virtual bool Recyclable() const { return true; }
  // The k-th root session, k >= 0.
  virtual SessionScript MakeSession(int64_t k) const = 0;
};

// Counts requests in a script, children included.
int64_t CountRequests(const SessionScript& s);

// Builds a Workload from a --workload spec:
//   "agentic"                         (AgenticOptions below)
//   "trace:kv-cache-tester:DIR_OR_FILE"
//   "trace:mooncake:FILE"
struct WorkloadOptions {
  uint64_t seed = 1;
  // agentic
  int64_t ctx_max = 4096;
  int32_t turns = 8;
  double tool_gap_s = 1.0;
  int64_t sessions = 0;     // 0: 2 * concurrency
  int32_t out_median = 64;  // median assistant reply, tokens
  // traces
  double length_scale = 1.0;  // multiplies every block and output length
  double time_scale = 1.0;    // multiplies think times and arrival times
  int64_t max_context = 0;    // 0: unlimited; else prompt + output cap
  int32_t concurrency = 4;
};
Result<std::unique_ptr<Workload>> MakeWorkload(const std::string& spec, const TokenSpace& space,
                                               const WorkloadOptions& opt);

}  // namespace pg::bench
