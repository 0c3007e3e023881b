// prosgrow route: the cache-aware router in front of prosgrow replicas
// (src/route/router.h).
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "base/cli_util.h"
#include "base/units.h"
#include "route/router.h"
#include "subcommands.h"

namespace pg {
namespace {

// A byte-size flag ("64MiB", "1048576") stored into *out.
void AddByteSizeOption(CLI::App& app, const std::string& name, int64_t* out, const std::string& help) {
  app.add_option_function<std::string>(
      name,
      [name, out](const std::string& text) {
        Result<uint64_t> bytes = ParseByteSize(text);
        if (!bytes.ok()) throw CLI::ValidationError(name, bytes.status().message());
        if (*bytes > (uint64_t{1} << 40)) throw CLI::ValidationError(name, "larger than 1TiB");
        *out = static_cast<int64_t>(*bytes);
      },
      help + " [" + std::to_string(*out) + "]");
}

}  // namespace

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
  app.add_option("--max-responses", o.max_responses,
                 "Responses answer ids kept so previous_response_id reaches their replica (least recently used "
                 "forgotten first)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 24));
  app.add_option("--max-index-blocks", o.max_index_blocks, "KV blocks indexed per replica (more are not recorded)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 26));
  app.add_option("--upstream-ttfb-timeout", o.upstream_ttfb_timeout_s,
                 "seconds a replica has to send its status line (a non-streamed answer comes whole: this bounds its "
                 "whole generation); past it the replica is taken out and the request moves on")
      ->capture_default_str();
  app.add_option("--upstream-idle-timeout", o.upstream_idle_timeout_s,
                 "seconds a replica may stay silent once it answered (a stream's first token waits for the prompt's "
                 "prefill); past it the replica is taken out and the request moves on")
      ->capture_default_str();
  app.add_option("--upstream-quarantine", o.upstream_quarantine_s,
                 "seconds a replica that missed a deadline stays out, whatever its /health says")
      ->capture_default_str();
  AddByteSizeOption(app, "--upstream-max-body-bytes", &o.upstream_max_body_bytes,
                    "largest non-streamed replica answer relayed (accepts 64MiB); a larger one is a 502");
  std::string curve_key_file;
  app.add_option("--kv-events-curve-server-key-file", curve_key_file,
                 "the replicas' CURVE public key (Z85, 40 characters; serve logs it): subscribe only to that key");
  // serve's front-door flags: workers, write timeout, request limits (docs/server.md).
  AddServerLimitFlags(app, &o.front);
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  if (Status v = o.Validate(); !v.ok()) return Fail("route", v.message());
  if (!curve_key_file.empty()) {
    std::ifstream in(curve_key_file);
    std::getline(in, o.kv_events_curve_server_key);
    if (o.kv_events_curve_server_key.size() != 40)
      return Fail("route", "--kv-events-curve-server-key-file " + curve_key_file + ": expected 40 Z85 characters");
  }
  o.mode = policy == "cache" ? RouteMode::kCacheAware : RouteMode::kRoundRobin;
  // Request and answer bodies (up to --max-body-bytes, --upstream-max-body-bytes) go
  // back to the system when freed: a fixed mmap threshold keeps glibc from raising it
  // past them and holding their memory in its per-thread arenas.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
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
