#include "bench/workload_agentic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/bench_rng.h"

namespace pg::bench {
namespace {

// Content scopes: 0 is shared by every session; session k uses k + 1.
constexpr uint64_t kSharedScope = 0;
constexpr uint64_t kSystemBlock = 0;
constexpr uint64_t kToolsBlock = 1;

int64_t Clamp(double v, int64_t lo, int64_t hi) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::llround(v)), lo, std::max(lo, hi));
}

}  // namespace

Result<std::unique_ptr<AgenticWorkload>> AgenticWorkload::Create(const TokenSpace& space, const WorkloadOptions& opt) {
  if (opt.ctx_max < 256 || opt.ctx_max > (1 << 22)) {
    return InvalidArgument(fmt::format("--ctx-max {} must be in [256, 4194304]", opt.ctx_max));
  }
  if (opt.turns < 1 || opt.turns > 10000) {
    return InvalidArgument(fmt::format("--turns {} must be in [1, 10000]", opt.turns));
  }
  if (!(opt.tool_gap_s >= 0) || opt.tool_gap_s > 3600) {
    return InvalidArgument(fmt::format("--tool-gap-s {} must be in [0, 3600]", opt.tool_gap_s));
  }
  if (opt.out_median < 1 || opt.out_median * 4 > opt.ctx_max / 4) {
    return InvalidArgument(fmt::format("--out-median {} must be in [1, ctx_max / 16]", opt.out_median));
  }
  if (opt.sessions < 0) return InvalidArgument("--sessions must be >= 0");
  int64_t sessions = opt.sessions > 0 ? opt.sessions : 2 * std::max(1, opt.concurrency);
  return std::unique_ptr<AgenticWorkload>(new AgenticWorkload(space, opt, sessions));
}

std::string AgenticWorkload::Describe() const {
  return fmt::format("agentic (ctx_max {}, turns {}, tool gap {} s, out median {}, {} sessions/pass, seed {})",
                     opt_.ctx_max, opt_.turns, opt_.tool_gap_s, opt_.out_median, sessions_, space_.seed());
}

SessionScript AgenticWorkload::MakeSession(int64_t k) const {
  const double ctx = static_cast<double>(opt_.ctx_max);
  const uint64_t scope = static_cast<uint64_t>(k) + 1;
  BenchRng rng(Mix64(space_.seed()) ^ Mix64(0xa9e47c5ULL + static_cast<uint64_t>(k)));

  SessionScript s;
  s.label = fmt::format("agentic#{}", k);
  std::vector<int32_t> context;
  space_.AppendBlock(kSharedScope, kSystemBlock, Clamp(0.08 * ctx, 1, opt_.ctx_max), &context);
  space_.AppendBlock(kSharedScope, kToolsBlock, Clamp(0.30 * ctx, 1, opt_.ctx_max), &context);
  space_.AppendBlock(scope, 0, Clamp(rng.Uniform(0.02, 0.06) * ctx, 1, opt_.ctx_max), &context);

  uint64_t block = 1;
  for (int32_t t = 0; t < opt_.turns; ++t) {
    int64_t reply = Clamp(rng.LogNormal(opt_.out_median, 0.6), 8, 4 * int64_t{opt_.out_median});
    int64_t tool = Clamp(rng.LogNormal(0.04 * ctx, 0.8), 16, static_cast<int64_t>(0.2 * ctx));
    double gap = t == 0 ? 0.0 : rng.Exponential(opt_.tool_gap_s);
    if (static_cast<int64_t>(context.size()) + reply > opt_.ctx_max) break;
    SessionEvent e;
    e.wait_before_s = gap;
    e.prompt = context;
    e.max_tokens = static_cast<int32_t>(reply);
    s.events.push_back(std::move(e));
    space_.AppendBlock(scope, block++, reply, &context);  // synthetic assistant reply
    space_.AppendBlock(scope, block++, tool, &context);   // tool result
  }
  return s;
}

}  // namespace pg::bench
