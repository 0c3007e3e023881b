// The serve flags of the KV hints and quotas (--kv-pin-budget,
// --kv-retain-budget, --kv-session-quota-device/-host, --kv-fair-share) and
// their conversion into an EngineConfig. docs/server.md lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"
#include "engine/engine_config.h"

namespace pg {

struct KvHintFlags {
  std::string pin_budget;            // size; "" = the default
  std::string retain_budget;         // size; "" = the default
  std::string session_quota_device;  // size; "" or 0 = none
  std::string session_quota_host;
  bool fair_share = false;
  int64_t max_sessions = 65536;
  double session_idle_s = 3600;
};

void AddKvHintFlags(CLI::App& app, KvHintFlags* f);
// One-line errors naming the flag.
Status ApplyKvHintFlags(const KvHintFlags& f, EngineConfig* c);

}  // namespace pg
