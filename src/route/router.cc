#include "route/router.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cctype>
#include <chrono>

#include "base/log.h"
#include "metrics/metric_set.h"
#include "route/router_impl.h"
#include "server/error_response.h"
#include "server/openai/openai_error.h"

namespace pg {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool RelayedHeader(const std::string& name) {
  const std::string n = Lower(name);
  for (const char* exact :
       {"x-request-id", "request-id", "retry-after", "www-authenticate", "allow", "cache-control", "x-accel-buffering"})
    if (n == exact) return true;
  for (const char* prefix : {"x-prosgrow-", "x-ratelimit-", "anthropic-", "openai-"})
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

void RefuseInPathShape(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
  SendError(res, ErrorShapeForPath(req.path), e, nullptr);
}

void Router::Impl::CheckHealth() {
  while (!stop) {
    for (auto& r : replicas) {
      httplib::Client cli(r->url);
      cli.set_connection_timeout(1);
      cli.set_read_timeout(1);
      auto res = cli.Get("/health");
      // A replica that missed a deadline stays out for its quarantine, whatever /health says.
      r->healthy = res && res->status == 200 && NowMs() >= r->out_until_ms;
    }
    for (int i = 0; i < 5 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void Router::Impl::TakeOut(int i) {
  Replica& r = *replicas[i];
  r.out_until_ms = NowMs() + int64_t(options.upstream_quarantine_s * 1000);
  r.healthy = false;
  r.deadlines_missed++;
}

std::string Router::Impl::MetricsText() const {
  MetricSet m;
  m.Counter("prosgrow_route_requests_total", "Requests the router received.", requests.load());
  m.Counter("prosgrow_route_retries_total", "Requests moved to another replica after one did not answer.",
            retries.load());
  m.Counter("prosgrow_route_deadline_failovers_total",
            "Requests moved to another replica after one missed its time-to-first-byte or idle deadline.",
            deadline_failovers.load());
  m.Counter("prosgrow_route_oversized_answers_total",
            "Non-streamed replica answers larger than --upstream-max-body-bytes (the client got a 502).",
            oversized_answers.load());
  m.Counter("prosgrow_route_invalid_answers_total",
            "Replica answers with an invalid status or a body that is not JSON (the client got a 502).",
            invalid_answers.load());
  m.Counter("prosgrow_route_resumed_streams_total",
            "Streams continued on another replica after theirs died mid-stream.", resumed_streams.load());
  m.Counter("prosgrow_route_predicted_cached_tokens_total", "Prompt tokens the index said the chosen replica held.",
            predicted_cached_tokens.load());
  MetricFamily& routed = m.Counter("prosgrow_route_replica_requests_total", "Requests routed to each replica.");
  for (const auto& r : replicas) routed.Add({{"replica", r->url}}, r->routed.load());
  MetricFamily& missed = m.Counter("prosgrow_route_replica_deadlines_missed_total",
                                   "Times each replica missed a deadline (then taken out for --upstream-quarantine).");
  for (const auto& r : replicas) missed.Add({{"replica", r->url}}, r->deadlines_missed.load());
  MetricFamily& up = m.Gauge("prosgrow_route_replica_up", "Whether the replica answers /health and is not taken out.");
  for (const auto& r : replicas) up.Add({{"replica", r->url}}, r->healthy ? 1 : 0);
  MetricFamily& blocks =
      m.Gauge("prosgrow_route_index_blocks", "Blocks the router believes each replica holds, per medium.");
  for (const auto& r : replicas)
    for (const auto& [medium, n] : r->index->BlocksPerMedium())
      blocks.Add({{"replica", r->url}, {"medium", medium}}, n);
  // Every table the router keeps: entries now, bytes now, and its bound in bytes.
  MetricFamily& entries = m.Gauge("prosgrow_route_table_entries", "Entries in each of the router's tables.");
  MetricFamily& bytes = m.Gauge("prosgrow_route_table_bytes", "Bytes each of the router's tables holds (at most).");
  MetricFamily& bound =
      m.Gauge("prosgrow_route_table_bound_bytes", "The most bytes each of the router's tables may hold.");
  for (const auto& [name, t] : {std::pair{"sessions", sessions.get()}, std::pair{"responses", responses.get()}}) {
    entries.Add({{"table", name}}, double(t->entries()));
    bytes.Add({{"table", name}}, double(t->bytes()));
    bound.Add({{"table", name}}, double(t->bound_bytes()));
  }
  for (const auto& r : replicas) {
    entries.Add({{"table", "index"}, {"replica", r->url}}, double(r->index->blocks()));
    bytes.Add({{"table", "index"}, {"replica", r->url}}, double(r->index->bytes()));
    bound.Add({{"table", "index"}, {"replica", r->url}}, double(r->index->bound_bytes()));
  }
  MetricFamily& dropped = m.Counter("prosgrow_route_index_dropped_blocks_total",
                                    "Blocks a replica reported that its full index did not record.");
  for (const auto& r : replicas) dropped.Add({{"replica", r->url}}, double(r->index->dropped()));
  return m.Render();
}

void Router::Impl::SetUpRoutes() {
  GuardedHttpServer& srv = *server;
  auto forward = [this](const httplib::Request& req, httplib::Response& res) { Forward(req, res); };
  // Every route serve answers (src/server/http_server.cc) but its own
  // /health, /metrics and /kv-events, which the router answers itself.
  const char* posts[] = {
      "/v1/chat/completions", "/v1/completions",           "/v1/responses", R"(/v1/sessions/([^/]+)/release)",
      "/v1/messages",         "/v1/messages/count_tokens", "/tokenize",     "/apply-template"};
  const char* gets[] = {"/v1/models", R"(/v1/models/(.+))"};
  for (const char* p : posts) srv.Post(p, forward);
  for (const char* p : gets) srv.Get(p, forward);
  srv.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    bool any = false;
    for (auto& r : replicas) any = any || r->healthy;
    res.status = any ? 200 : 503;
    res.set_content(any ? R"({"status":"ok"})" : R"({"status":"no replica"})", "application/json");
  });
  srv.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
  });
  srv.Get("/kv-events", [](const httplib::Request& req, httplib::Response& res) {
    RefuseInPathShape(req, res,
                      NotFoundError("the router publishes no KV events: subscribe to each replica's /kv-events"));
  });
  // Known paths with the wrong method, answered as serve answers them.
  auto not_allowed = [](const char* allow) {
    return [allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      ApiError e = BadRequest(req.method + " is not allowed on " + req.path + " (use " + allow + ")");
      e.http_status = 405;
      RefuseInPathShape(req, res, e);
    };
  };
  auto refuse = [&](const char* p, const char* allow) { srv.RefuseOtherMethods(p, allow, not_allowed(allow)); };
  for (const char* p : posts) refuse(p, "POST");
  for (const char* p : gets) refuse(p, "GET");
  for (const char* p : {"/health", "/metrics", "/kv-events"}) refuse(p, "GET");
  srv.InstallErrorAnswers(
      [](const httplib::Request& req, httplib::Response& res, const ApiError& e) { RefuseInPathShape(req, res, e); },
      nullptr, OpenAiErrorJson);
}

Result<std::unique_ptr<Router>> Router::Create(RouterOptions options) {
  if (options.replicas.empty()) return InvalidArgument("route: give at least one --replica URL");
  auto impl = std::make_unique<Impl>();
  for (const std::string& url : options.replicas) {
    if (url.rfind("http://", 0) != 0)
      return InvalidArgument(fmt::format("route: replica '{}' is not http://HOST:PORT", url));
    auto r = std::make_unique<Replica>();
    r->url = url;
    r->index = std::make_unique<ReplicaIndex>(options.max_index_blocks);
    impl->replicas.push_back(std::move(r));
  }
  PG_RETURN_IF_ERROR(options.Validate());
  impl->options = std::move(options);
  const RouterOptions& o = impl->options;
  impl->limits = UpstreamLimits{o.upstream_ttfb_timeout_s, o.upstream_idle_timeout_s, o.upstream_max_body_bytes};
  impl->sessions = std::make_unique<AffinityTable>(o.max_sessions, impl->replicas.size());
  impl->responses = std::make_unique<AffinityTable>(o.max_responses, impl->replicas.size());
  impl->options.front.host = impl->options.host;
  impl->options.front.port = impl->options.port;
  impl->options.front.api_key.clear();  // clients' keys are the replicas' to check
  impl->options.front.api_key_file.clear();
  PG_RETURN_IF_ERROR(impl->options.front.Validate());
  impl->server = std::make_unique<GuardedHttpServer>(impl->options.front);
  for (auto& r : impl->replicas)
    r->feed = std::make_unique<ReplicaFeed>(r->url, impl->options.api_key, r->index.get(),
                                            impl->options.kv_events_curve_server_key);
  impl->SetUpRoutes();
  impl->health = std::thread([p = impl.get()] { p->CheckHealth(); });
  return std::unique_ptr<Router>(new Router(std::move(impl)));
}

Status RouterOptions::Validate() const {
  auto seconds = [](const char* flag, double s) -> Status {
    if (!(s > 0) || s > 86400) return InvalidArgument(fmt::format("{} {} is outside (0, 86400] seconds", flag, s));
    return Status::Ok();
  };
  PG_RETURN_IF_ERROR(seconds("--upstream-ttfb-timeout", upstream_ttfb_timeout_s));
  PG_RETURN_IF_ERROR(seconds("--upstream-idle-timeout", upstream_idle_timeout_s));
  PG_RETURN_IF_ERROR(seconds("--upstream-quarantine", upstream_quarantine_s));
  if (upstream_max_body_bytes < 1024 || upstream_max_body_bytes > (int64_t{1} << 40))
    return InvalidArgument(fmt::format("--upstream-max-body-bytes {} is outside 1KiB..1TiB", upstream_max_body_bytes));
  for (auto [flag, n] : {std::pair{"--max-sessions", max_sessions}, std::pair{"--max-responses", max_responses},
                         std::pair{"--max-index-blocks", max_index_blocks}})
    if (n < 1 || n > (size_t{1} << 26)) return InvalidArgument(fmt::format("{} {} is outside 1..2^26", flag, n));
  return Status::Ok();
}

Router::Router(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Router::~Router() {
  Stop();
  impl_->stop = true;
  impl_->health.join();
  for (auto& r : impl_->replicas) r->feed.reset();
}

Status Router::Run() {
  Result<int> port = impl_->server->Bind();
  if (!port.ok()) return InvalidArgument("route: " + port.status().message());
  impl_->options.port = *port;
  PG_LOG_INFO("route: listening on http://{}:{} for {} replicas", impl_->options.host, impl_->options.port,
              impl_->replicas.size());
  impl_->server->listen_after_bind();
  return Status::Ok();
}

void Router::Stop() { impl_->server->stop(); }

int Router::port() const { return impl_->options.port; }

}  // namespace pg
