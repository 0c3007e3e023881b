#include "bench/workload.h"

#include <fmt/format.h>

#include "bench/trace_kv_cache_tester.h"
#include "bench/trace_mooncake.h"
#include "bench/workload_agentic.h"

namespace pg::bench {

int64_t CountRequests(const SessionScript& s) {
  int64_t n = 0;
  for (const SessionEvent& e : s.events) n += e.kind == SessionEvent::Kind::kRequest;
  for (const SessionScript& c : s.children) n += CountRequests(c);
  return n;
}

Result<std::unique_ptr<Workload>> MakeWorkload(const std::string& spec, const TokenSpace& space,
                                               const WorkloadOptions& opt) {
  if (!(opt.length_scale > 0) || opt.length_scale > 100) {
    return InvalidArgument(fmt::format("--length-scale {} must be in (0, 100]", opt.length_scale));
  }
  if (!(opt.time_scale >= 0) || opt.time_scale > 1000) {
    return InvalidArgument(fmt::format("--time-scale {} must be in [0, 1000]", opt.time_scale));
  }
  if (opt.max_context < 0) return InvalidArgument("--max-context must be >= 0");
  if (spec == "agentic") {
    PG_ASSIGN_OR_RETURN(auto w, AgenticWorkload::Create(space, opt));
    return std::unique_ptr<Workload>(std::move(w));
  }
  const std::string kKv = "trace:kv-cache-tester:";
  const std::string kMoon = "trace:mooncake:";
  if (spec.rfind(kKv, 0) == 0) {
    PG_ASSIGN_OR_RETURN(auto w, KvCacheTesterWorkload::Load(spec.substr(kKv.size()), space, opt));
    return std::unique_ptr<Workload>(std::move(w));
  }
  if (spec.rfind(kMoon, 0) == 0) {
    PG_ASSIGN_OR_RETURN(auto w, MooncakeWorkload::Load(spec.substr(kMoon.size()), space, opt));
    return std::unique_ptr<Workload>(std::move(w));
  }
  return InvalidArgument(
      fmt::format("unknown workload '{}' (expected agentic, trace:kv-cache-tester:PATH or trace:mooncake:FILE)", spec));
}

}  // namespace pg::bench
