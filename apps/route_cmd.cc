// prosgrow route: the cache-aware router in front of prosgrow replicas
// (src/route/router.h).
#include <pthread.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "base/cli_util.h"
#include "route/router.h"
#include "subcommands.h"

namespace pg {

int RouteMain(int argc, char** argv) {
  CLI::App app(
      "Cache-aware router: follows the replicas' KV events (serve --kv-events) and sends each request "
      "where its context is cached",
      "prosgrow route");
  RouterOptions o;
  std::string policy = "cache";
  app.add_option("--host", o.host, "listen address");
  app.add_option("--port", o.port, "listen port (0 = ephemeral)")->check(CLI::Range(0, 65535));
  app.add_option("--replica", o.replicas, "replica base URL, http://HOST:PORT (repeat)")->required();
  app.add_option("--policy", policy, "cache (prefix + load + session affinity) | round-robin (baseline)")
      ->check(CLI::IsMember({"cache", "round-robin"}));
  app.add_option("--api-key", o.api_key, "API key the replicas expect (for /kv-events and /tokenize)");
  app.add_option("--max-sessions", o.max_sessions, "session affinities kept (least recently used forgotten first)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 24));
  std::string curve_key_file;
  app.add_option("--kv-events-curve-server-key-file", curve_key_file,
                 "the replicas' CURVE public key (Z85, 40 characters; serve logs it): subscribe only to that key");
  // serve's front-door flags: workers, write timeout, request limits (docs/server.md).
  AddServerLimitFlags(app, &o.front);
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  if (!curve_key_file.empty()) {
    std::ifstream in(curve_key_file);
    std::getline(in, o.kv_events_curve_server_key);
    if (o.kv_events_curve_server_key.size() != 40)
      return Fail("route", "--kv-events-curve-server-key-file " + curve_key_file + ": expected 40 Z85 characters");
  }
  o.mode = policy == "cache" ? RouteMode::kCacheAware : RouteMode::kRoundRobin;
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  auto router = Router::Create(o);
  if (!router.ok()) return Fail("route", router.status().message());
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig != 0) (*router)->Stop();
  });
  Status st = (*router)->Run();
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  if (!st.ok()) return Fail("route", st.message());
  return 0;
}

}  // namespace pg
