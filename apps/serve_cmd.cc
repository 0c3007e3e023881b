// prosgrow serve: the OpenAI-compatible HTTP server on top of the engine.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "base/cli_util.h"
#include "base/log.h"
#include "build_info.h"
#include "doctor/preflight.h"
#include "engine/engine.h"
#include "engine_flags.h"
#include "kv_hint_flags.h"
#include "model/model_source.h"
#include "server/http/server_options.h"
#include "server/http_server.h"
#include "subcommands.h"

namespace pg {
namespace {

// `prosgrow doctor`'s checks (src/doctor/preflight.h) for this configuration:
// warnings are logged, the first failure refuses the start with doctor's line.
Status Preflight(const EngineConfig& config, const ServerOptions& so) {
  PreflightPlan plan = PlanFromConfig(config);
  plan.http_host = so.host;
  plan.http_port = so.port;
  for (const CheckResult& r : RunPreflight(plan)) {
    if (r.verdict == CheckResult::Verdict::kWarn) PG_LOG_WARN("preflight {}", FormatCheck(r));
    if (r.verdict == CheckResult::Verdict::kFail)
      return Status(StatusCode::kInvalidArgument, FormatCheck(r) + " (prosgrow doctor lists every check)");
  }
  return Status::Ok();
}

}  // namespace

int ServeMain(int argc, char** argv) {
  CLI::App app("OpenAI-compatible HTTP server (chat, completions, models, health, metrics)", "prosgrow serve");
  EngineFlags ef;
  AddEngineFlags(app, &ef);
  ServerOptions so;
  AddServerFlags(app, &so);
  std::string served_name;
  double session_ttl = 120;
  app.add_option("--served-model-name", served_name, "model id reported by /v1/models (default: file stem)");
  app.add_option("--session-ttl", session_ttl, "optimized: seconds a tool-waiting session's KV is retained")
      ->check(CLI::Range(0.0, 86400.0));
  KvHintFlags hf;
  AddKvHintFlags(app, &hf);
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  Status v = so.Validate();
  if (!v.ok()) return Fail("serve", v.message());
  so.build = ThisBuild();
  PG_LOG_INFO("{}", BuildInfoLine(so.build));
  auto config = ToEngineConfig(ef);
  if (!config.ok()) return Fail("serve", config.status().message());
  config->model_name = served_name;
  config->session_ttl_s = session_ttl;
  // --kv-events-tokens auto: token ids are prompt text; with API keys set
  // (tenants), events carry hashes only unless asked for.
  if (ef.kv_events_tokens == "auto") config->kv_events_tokens = so.api_key.empty() && so.api_keys_file.empty();
  if (Status hs = ApplyKvHintFlags(hf, &*config); !hs.ok()) return Fail("serve", hs.message());
  // The model file is opened once: the preflight checks this mapping and the
  // engine loads from it. (If it does not open, the preflight says why.)
  if (auto source = OpenModelSource(config->model_path); source.ok()) config->model_file = std::move(*source);
  if (Status pre = Preflight(*config, so); !pre.ok()) return Fail("serve", pre.message());
  // SIGINT/SIGTERM (stop) and SIGHUP (re-read --api-keys-file) are taken by
  // a watcher thread (sigwait), never by a handler: neither is
  // async-signal-safe. Block them before any thread starts so every thread
  // inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  auto engine = Engine::Create(*config);
  if (!engine.ok()) return Fail("serve", engine.status().message());
  (*engine)->Start();
  HttpServer server(so, engine->get());
  std::thread watcher([&] {
    for (;;) {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      if (sig == SIGHUP) {
        (void)server.ReloadKeys();  // logs one line either way
        continue;
      }
      if (sig != 0) server.Stop();
      return;
    }
  });
  Status st = server.Run();
  // Wake the watcher if the server stopped on its own.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  (*engine)->Stop();
  Status flush = (*engine)->FlushCache();
  if (!flush.ok()) PG_LOG_WARN("KV flush on shutdown: {}", flush.message());
  if (!st.ok()) return Fail("serve", st.message());
  return 0;
}

}  // namespace pg
