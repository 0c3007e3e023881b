#include "kv_hint_flags.h"

#include <fmt/format.h>

#include "base/units.h"

namespace pg {

void AddKvHintFlags(CLI::App& app, KvHintFlags* f) {
  app.add_option("--kv-pin-budget", f->pin_budget,
                 "most KV memory kv_hints may pin, e.g. 64MiB (default 1/4 of the host tier; 0 = no pins)");
  app.add_option("--kv-retain-budget", f->retain_budget,
                 "most KV memory kv_hints / cache_control may retain (default 1/2 of host + disk; 0 = no retention)");
  app.add_option("--kv-session-quota-device", f->session_quota_device,
                 "cached device KV one session may keep, e.g. 32MiB (default and 0: no quota)");
  app.add_option("--kv-session-quota-host", f->session_quota_host,
                 "cached host KV one session may keep (default and 0: no quota)");
  app.add_flag("--kv-fair-share", f->fair_share,
               "evict from the session furthest above its fair share of a tier first");
  app.add_option("--kv-max-sessions", f->max_sessions,
                 "most session names the cache tracks (least recently used forgotten first)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("--kv-session-idle", f->session_idle_s,
                 "seconds after which an unused, unretained session name is forgotten (0 = never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 31536000.0));
}

namespace {
Result<uint64_t> Size(const std::string& flag, const std::string& value) {
  auto r = ParseByteSize(value);
  if (!r.ok()) return InvalidArgument(fmt::format("{}: {}", flag, r.status().message()));
  return *r;
}
}  // namespace

Status ApplyKvHintFlags(const KvHintFlags& f, EngineConfig* c) {
  if (!f.pin_budget.empty()) {
    PG_ASSIGN_OR_RETURN(uint64_t b, Size("--kv-pin-budget", f.pin_budget));
    c->kv_pin_budget_bytes = int64_t(b);
  }
  if (!f.retain_budget.empty()) {
    PG_ASSIGN_OR_RETURN(uint64_t b, Size("--kv-retain-budget", f.retain_budget));
    c->kv_retain_budget_bytes = int64_t(b);
  }
  if (!f.session_quota_device.empty()) {
    PG_ASSIGN_OR_RETURN(c->kv_session_quota_device_bytes, Size("--kv-session-quota-device", f.session_quota_device));
  }
  if (!f.session_quota_host.empty()) {
    PG_ASSIGN_OR_RETURN(c->kv_session_quota_host_bytes, Size("--kv-session-quota-host", f.session_quota_host));
  }
  c->kv_fair_share = f.fair_share;
  c->kv_max_sessions = f.max_sessions;
  c->kv_session_idle_s = f.session_idle_s;
  return Status::Ok();
}

}  // namespace pg
