#include "doctor/preflight.h"

#include <fmt/format.h>

#include "doctor/block_hash_check.h"
#include "doctor/host_checks.h"
#include "doctor/kv_check.h"
#include "doctor/model_check.h"
#include "doctor/network_checks.h"

namespace pg {
namespace {

CheckResult CheckEvents(const std::string& endpoint) {
  const char* name = "kv events";
  if (endpoint.empty()) return CheckResult::Skip(name, "no --kv-events");
  auto e = ParseTcpEndpoint(endpoint);
  if (!e.ok()) return CheckResult::Fail(name, e.status().message(), "use --kv-events tcp://HOST:PORT");
  // Wildcards and loopback are bound (PublisherBinds, event_publisher.h);
  // other hosts are connected to, and ZMQ connects in the background, so
  // there is nothing to check yet.
  const bool binds = e->host == "*" || e->host.find("::") != std::string::npos || e->host == "127.0.0.1" ||
                     e->host == "localhost" || e->host == "[::1]";
  if (!binds) return CheckResult::Ok(name, fmt::format("{}: publishes to a subscriber that binds there", endpoint));
  return CheckBindable(name, e->host, e->port, "--kv-events");
}

}  // namespace

PreflightPlan PlanFromConfig(const EngineConfig& c) {
  PreflightPlan p;
  p.model_path = c.model_path;
  p.model_file = c.model_file.get();
  p.kv_device_bytes = c.kv_device_bytes;
  p.kv_host_bytes = HostTierBytes(c);
  p.kv_disk_dir = DiskTierBytes(c) ? c.kv_disk_dir : "";
  p.kv_disk_bytes = DiskTierBytes(c);
  p.kv_events = c.kv_events;
  p.kv_remote = c.kv_remote;
  p.kv_remote_password = c.kv_remote_password;
  p.kv_hash_keyed = !c.kv_hash_secret.empty();
  p.page_tokens = c.page_tokens;
  p.kv_bf16 = c.kv_bf16;
  p.attn_precise = c.attention == AttentionMode::kPrecise;
  return p;
}

std::vector<CheckResult> RunPreflight(const PreflightPlan& plan) {
  std::vector<CheckResult> out;
  out.push_back(CheckCpu());
  ModelCheck model = CheckModelFile(plan.model_path, plan.model_file);
  out.push_back(model.result);
  uint64_t total = 0, available = 0;
  if (ReadMeminfo(&total, &available)) {
    out.push_back(CheckMemory({model.file_bytes, plan.kv_device_bytes, plan.kv_host_bytes}, total, available));
  } else {
    out.push_back(CheckResult::Skip("memory", "/proc/meminfo unreadable"));
  }
  if (model.config) {
    const ModelConfig& mc = *model.config;
    const KvLayout layout = mc.KvLayoutFor(plan.page_tokens, mc.KvDtypeFor(plan.kv_bf16, plan.attn_precise));
    out.push_back(CheckKvBytes(layout, {plan.kv_device_bytes, plan.kv_host_bytes, plan.kv_disk_bytes}));
  }
  out.push_back(CheckDiskTier(plan.kv_disk_dir, plan.kv_disk_bytes));
  out.push_back(CheckRedis(plan.kv_remote, 1.0, plan.kv_remote_password));
  out.push_back(CheckEvents(plan.kv_events));
  out.push_back(CheckBlockHashes({.keyed = plan.kv_hash_keyed,
                                  .kv_events = !plan.kv_events.empty(),
                                  .kv_remote = !plan.kv_remote.empty(),
                                  .disk = !plan.kv_disk_dir.empty()}));
  if (plan.http_host.empty()) {
    out.push_back(CheckResult::Skip("http port", "not serving"));
  } else {
    out.push_back(CheckBindable("http port", plan.http_host, plan.http_port, "--host/--port", /*reuse_port=*/true));
  }
  return out;
}

}  // namespace pg
