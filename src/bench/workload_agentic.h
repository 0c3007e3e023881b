// AgenticWorkload: the built-in seeded agent workload ("--workload agentic").
//
// Every session is one agent conversation over a context of at most ctx_max
// tokens (prompt + output of every request):
//   prefix   system prompt  round(0.08 * ctx_max) tokens  } shared by all
//            tool schemas   round(0.30 * ctx_max) tokens  } sessions
//            user task      uniform [0.02, 0.06] * ctx_max, own to the session
//   turn t   request: the whole context so far; max_tokens = reply_t where
//              reply_t ~ LogNormal(median = out_median, sigma 0.6),
//              clamped to [8, 4 * out_median];
//            then the context grows by a synthetic assistant reply of
//              reply_t tokens and a tool result of
//              LogNormal(median = 0.04 * ctx_max, sigma 0.8) tokens, clamped to
//              [16, 0.2 * ctx_max];
//            the next request waits an Exponential(mean = tool_gap_s) gap.
//   A session ends after `turns` requests or when the next request would
//   exceed ctx_max.
// The assistant reply appended to the context is synthetic (not the server's
// text), so every prompt is fixed by (seed, session index) and the prefix a
// server can reuse is the previous prompt of the session plus the shared
// prefix. Sessions k >= `sessions` are new conversations (recycling never
// repeats content). Thread-safety: immutable after Create.
#pragma once

#include <memory>

#include "bench/workload.h"

namespace pg::bench {

class AgenticWorkload : public Workload {
 public:
  static Result<std::unique_ptr<AgenticWorkload>> Create(const TokenSpace& space, const WorkloadOptions& opt);
  std::string Describe() const override;
  int64_t SessionsPerPass() const override { return sessions_; }
  SessionScript MakeSession(int64_t k) const override;

 private:
  AgenticWorkload(const TokenSpace& space, const WorkloadOptions& opt, int64_t sessions)
      : space_(space), opt_(opt), sessions_(sessions) {}
  TokenSpace space_;
  WorkloadOptions opt_;
  int64_t sessions_;
};

}  // namespace pg::bench
