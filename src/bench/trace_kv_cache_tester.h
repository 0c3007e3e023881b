// KvCacheTesterWorkload: replays agent-session traces in the kv-cache-tester
// format (see ../shared/data/README.md): one JSON object per file with
// block_size (64), hash_id_scope, and `requests` in time order; each request
// has in/out token counts, hash_ids (one per block of input) and think_time
// (the idle gap before it); an entry {"type": "subagent", "requests": [...]}
// is a sub-agent with its own context.
//
// Replay rules:
//   - each trace is one session, its requests sent in order, each after
//     waiting think_time * time_scale;
//   - a subagent entry spawns a child session at its position (after its own
//     think_time, if any); the parent goes on without waiting for it;
//   - root session k replays trace (k mod T) as instance (k div T). With
//     hash_id_scope "local" each (trace, instance) gets its own content scope,
//     so a recycled trace is a new conversation; "global" shares one scope
//     across all traces and instances;
//   - lengths: every block becomes ScaledBlockTokens(block_size, length_scale)
//     tokens, out becomes max(1, round(out * length_scale));
//   - max_context (> 0): a session is cut before its first request whose
//     scaled prompt + output exceeds it; traces whose first request exceeds
//     it are skipped.
// Thread-safety: immutable after Load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/workload.h"

namespace pg::bench {

struct KvTraceEntry {
  bool subagent = false;
  double t = 0;           // seconds since session start (informational)
  double think_time = 0;  // seconds before this entry
  int64_t in = 0;         // input tokens (request)
  int64_t out = 0;        // output tokens (request)
  std::vector<int64_t> hash_ids;
  std::vector<KvTraceEntry> requests;  // subagent only
};

struct KvTrace {
  std::string id;
  int64_t block_size = 64;
  bool global_scope = false;
  std::vector<KvTraceEntry> requests;
};

// Parses one trace file's JSON text; `name` is used in error messages.
Result<KvTrace> ParseKvTrace(const std::string& json_text, const std::string& name);

class KvCacheTesterWorkload : public Workload {
 public:
  // `path`: a trace file, or a directory whose *.json files (sorted by name)
  // are the traces.
  static Result<std::unique_ptr<KvCacheTesterWorkload>> Load(const std::string& path, const TokenSpace& space,
                                                             const WorkloadOptions& opt);
  static std::unique_ptr<KvCacheTesterWorkload> FromTraces(std::vector<KvTrace> traces, const TokenSpace& space,
                                                           const WorkloadOptions& opt);
  std::string Describe() const override;
  int64_t SessionsPerPass() const override { return static_cast<int64_t>(traces_.size()); }
  SessionScript MakeSession(int64_t k) const override;
  const std::vector<KvTrace>& traces() const { return traces_; }
  int64_t skipped() const { return skipped_; }

 private:
  KvCacheTesterWorkload(std::vector<KvTrace> traces, const TokenSpace& space, const WorkloadOptions& opt,
                        int64_t skipped)
      : traces_(std::move(traces)), space_(space), opt_(opt), skipped_(skipped) {}
  void BuildSession(const KvTrace& trace, const std::vector<KvTraceEntry>& entries, uint64_t scope, uint64_t* ordinal,
                    SessionScript* out) const;
  std::vector<KvTrace> traces_;
  TokenSpace space_;
  WorkloadOptions opt_;
  int64_t skipped_ = 0;
};

}  // namespace pg::bench
