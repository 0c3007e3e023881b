#include "route/router.h"

#include <fmt/format.h>
#include <httplib.h>
#include <xxhash.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

#include "base/log.h"
#include "metrics/metric_set.h"
#include "route/replica_feed.h"
#include "route/replica_index.h"
#include "route/stream_splicer.h"
#include "route/upstream_call.h"
#include "server/anthropic_handler.h"
#include "server/api_request.h"
#include "server/error_response.h"
#include "server/guarded_http_server.h"

namespace pg {
namespace {

using json = nlohmann::json;

struct Replica {
  std::string url;
  ReplicaIndex index;
  std::unique_ptr<ReplicaFeed> feed;
  std::atomic<bool> healthy{false};
  std::atomic<int64_t> inflight{0};
  std::atomic<uint64_t> routed{0};
  std::atomic<uint64_t> failures{0};
};

// The headers a replica needs from the client's request.
httplib::Headers ForwardHeaders(const httplib::Request& req) {
  httplib::Headers out;
  for (const char* k : {"Authorization", "x-api-key", "anthropic-version", "anthropic-beta", "X-Session-Id", "Accept"})
    if (req.has_header(k)) out.emplace(k, req.get_header_value(k));
  return out;
}

std::string ClientSessionOf(const httplib::Request& req, const json& body) {
  if (req.has_header("X-Session-Id")) return req.get_header_value("X-Session-Id");
  if (!body.is_object()) return "";
  if (auto it = body.find("user"); it != body.end() && it->is_string()) return it->get<std::string>();
  if (auto m = body.find("metadata"); m != body.end() && m->is_object())
    if (auto u = m->find("user_id"); u != m->end() && u->is_string()) return u->get<std::string>();
  return "";
}

// The session's affinity key: the client's session name scoped by its
// credentials (a digest of its API-key headers), so two tenants' sessions
// of one name are two sessions here too. "" = none.
std::string SessionOf(const httplib::Request& req, const json& body) {
  std::string name = ClientSessionOf(req, body);
  if (name.empty()) return name;
  const std::string cred = req.get_header_value("Authorization") + "\n" + req.get_header_value("x-api-key");
  return fmt::format("{:016x}/", XXH3_64bits(cred.data(), cred.size())) + name;
}

// The router's own errors, in the shape of the path's API as serve writes
// them (error_response.h), before httplib compresses the body.
void Refuse(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
  SendError(res, ErrorShapeForPath(req.path), e, nullptr);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The replica's headers that reach the client (RelayedHeader); the router
// sets Content-Type itself.
void RelayHeaders(const httplib::Headers& from, httplib::Response& res) {
  for (const auto& [k, v] : from)
    if (RelayedHeader(k)) res.set_header(k, v);
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

struct Router::Impl {
  RouterOptions options;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::unique_ptr<GuardedHttpServer> server;
  std::mutex mu;  // sessions, turn
  // Session affinity, bounded: options.max_sessions names, least recently
  // used forgotten first.
  struct Home {
    int replica = -1;
    std::list<std::string>::iterator lru;
  };
  std::unordered_map<std::string, Home> session_home;
  std::list<std::string> session_lru;  // most recently used first
  std::vector<int64_t> sessions_per_replica;
  uint64_t turn = 0;
  std::atomic<uint64_t> retries{0}, predicted_cached_tokens{0}, requests{0}, resumed_streams{0};
  std::atomic<bool> stop{false};
  std::thread health;

  void CheckHealth() {
    while (!stop) {
      for (auto& r : replicas) {
        httplib::Client cli(r->url);
        cli.set_connection_timeout(1);
        cli.set_read_timeout(1);
        auto res = cli.Get("/health");
        r->healthy = res && res->status == 200;
      }
      for (int i = 0; i < 5 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // The prompt's token ids and block hashes (the caller's tenant's: the
  // client's own headers go along), from the first healthy replica's /tokenize.
  PromptBlocks PromptTokens(const httplib::Request& req) {
    if (options.mode != RouteMode::kCacheAware) return {};
    if (req.path != "/v1/chat/completions" && req.path != "/v1/completions") return {};
    for (auto& r : replicas) {
      if (!r->healthy) continue;
      httplib::Client cli(r->url);
      cli.set_connection_timeout(1);
      cli.set_read_timeout(30);
      auto res = cli.Post("/tokenize", ForwardHeaders(req), req.body, "application/json");
      if (!res) continue;
      if (res->status != 200) return {};  // the replica will answer the request with the same error
      json j = json::parse(res->body, nullptr, false);
      PromptBlocks p;
      if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) return p;
      p.tokens = j["tokens"].get<std::vector<int32_t>>();
      if (j.contains("block_hashes") && j["block_hashes"].is_array()) {
        p.block_hashes = j["block_hashes"].get<std::vector<EventBlockHash>>();
      }
      return p;
    }
    return {};
  }

  int Choose(const PromptBlocks& prompt, const std::string& session, const std::vector<bool>& excluded,
             int64_t* cached) {
    std::vector<ReplicaView> views(replicas.size());
    std::lock_guard<std::mutex> lock(mu);
    auto home = session.empty() ? session_home.end() : session_home.find(session);
    int64_t block = 16;
    for (size_t i = 0; i < replicas.size(); ++i) {
      Replica& r = *replicas[i];
      views[i].healthy = r.healthy && !excluded[i];
      ReplicaIndex::Match m = r.index.Longest(prompt.tokens);
      // A replica publishing hashes only is matched on the prompt's hashes.
      if (ReplicaIndex::Match h = r.index.LongestByHashes(prompt.block_hashes); h.tokens > m.tokens) m = h;
      views[i].cached_tokens = m.tokens;
      views[i].device_tokens = m.device_tokens;
      views[i].inflight = r.inflight;
      views[i].session_home = home != session_home.end() && home->second.replica == int(i);
      views[i].sessions = sessions_per_replica[i];
      if (r.index.block_size() > 0) block = r.index.block_size();
    }
    RoutePolicyOptions po;
    po.mode = options.mode;
    po.block_size = block;
    int i = ChooseReplica(views, po, &turn);
    if (i < 0) return i;
    *cached = views[i].cached_tokens;
    if (!session.empty()) {
      if (home != session_home.end()) {
        sessions_per_replica[home->second.replica]--;
        home->second.replica = i;
        session_lru.splice(session_lru.begin(), session_lru, home->second.lru);
      } else {
        while (!session_lru.empty() && session_home.size() >= options.max_sessions) {
          auto old = session_home.find(session_lru.back());
          sessions_per_replica[old->second.replica]--;
          session_home.erase(old);
          session_lru.pop_back();
        }
        session_lru.push_front(session);
        session_home.emplace(session, Home{i, session_lru.begin()});
      }
      sessions_per_replica[i]++;
    }
    return i;
  }

  // A client request as the router sends it upstream (again, on failover).
  struct Job {
    std::string method, path, body, content_type, session;
    httplib::Headers headers;
    PromptBlocks tokens;
    std::vector<bool> excluded;  // replicas that failed this request
  };

  // Replica i failed job: it is taken out until the health checker sees it again.
  void LoseReplica(Job& job, int i, const char* what) {
    Replica& r = *replicas[i];
    r.inflight--;
    r.failures++;
    r.healthy = false;
    job.excluded[i] = true;
    retries++;
    PG_LOG_WARN("route: {} {} {}; retrying elsewhere", r.url, what, job.path);
  }

  // Sends job to the best replica that answers (status and headers); null
  // when none does. *chosen is its index; its in-flight count is raised.
  std::shared_ptr<UpstreamCall> Send(Job& job, int* chosen) {
    for (size_t attempt = 0; attempt < replicas.size(); ++attempt) {
      int64_t cached = 0;
      int i = Choose(job.tokens, job.session, job.excluded, &cached);
      if (i < 0) return nullptr;
      replicas[i]->inflight++;
      auto call = UpstreamCall::Start(replicas[i]->url, job.method, job.path, job.headers, job.body, job.content_type);
      if (call->WaitHeaders()) {
        replicas[i]->routed++;
        predicted_cached_tokens += uint64_t(cached);
        *chosen = i;
        return call;
      }
      LoseReplica(job, i, "did not answer");
    }
    return nullptr;
  }

  // Relays an event stream. When its replica dies mid-stream, the request
  // goes to another replica and StreamSplicer continues the client's stream
  // from where it broke (or ends it with an error event when it cannot).
  void RelayStream(std::shared_ptr<Job> job, std::shared_ptr<UpstreamCall> call, int i, const std::string& type,
                   httplib::Response& res) {
    auto splicer = std::make_shared<StreamSplicer>(IsAnthropicPath(job->path) ? StreamSplicer::Dialect::kAnthropic
                                                                              : StreamSplicer::Dialect::kOpenAi);
    auto cur = std::make_shared<std::pair<std::shared_ptr<UpstreamCall>, int>>(std::move(call), i);
    res.set_chunked_content_provider(type, [this, job, splicer, cur](size_t, httplib::DataSink& sink) {
      std::string chunk, out;
      for (;;) {
        auto& [up, r] = *cur;
        while (up->NextChunk(&chunk)) {
          out.clear();
          splicer->Feed(chunk, &out);
          if (splicer->diverged()) break;
          if (!out.empty() && !sink.write(out.data(), out.size())) {
            up->Cancel();
            replicas[r]->inflight--;
            return false;
          }
        }
        std::string end;
        if (splicer->diverged()) {
          up->Cancel();
          replicas[r]->inflight--;
          end = splicer->ErrorEvent("the replica serving this stream was lost: " + splicer->refused());
        } else if (!up->failed() || splicer->done()) {
          replicas[r]->inflight--;
          sink.done();
          return true;
        } else {
          LoseReplica(*job, r, "broke off its stream for");
          if (splicer->BeginReplacement()) {
            int next = -1;
            auto again = Send(*job, &next);
            if (again && again->status() == 200) {
              resumed_streams++;
              *cur = {std::move(again), next};
              continue;
            }
            if (again) replicas[next]->inflight--;
            end = splicer->ErrorEvent("the replica serving this stream was lost and no other could continue it");
          } else {
            end = splicer->finished()
                      ? splicer->EndEvent()
                      : splicer->ErrorEvent("the replica serving this stream was lost: " + splicer->refused());
          }
        }
        sink.write(end.data(), end.size());
        sink.done();
        return true;
      }
    });
  }

  void Forward(const httplib::Request& req, httplib::Response& res) {
    if (!server->BeginHandling(req, res)) return;  // a chunked body past --max-body-bytes
    requests++;
    json body;
    if (req.method == "POST") {
      // Parsed as serve parses it (UTF-8, bounded depth): what serve refuses
      // is refused here with the same answer, before any replica sees it.
      ApiResult<nlohmann::ordered_json> parsed = ParseJsonBody(req.body, options.front.limits.max_json_depth);
      if (!parsed.ok()) return Refuse(req, res, parsed.error);
      body = json(parsed.value);
    }
    const bool stream = body.is_object() && body.value("stream", false) == true;
    auto job = std::make_shared<Job>();
    job->method = req.method;
    job->path = req.path;
    job->body = req.body;
    job->content_type = req.get_header_value("Content-Type");
    job->session = SessionOf(req, body);
    job->headers = ForwardHeaders(req);
    job->tokens = PromptTokens(req);
    job->excluded.assign(replicas.size(), false);
    for (;;) {
      int i = -1;
      auto call = Send(*job, &i);
      if (!call) return Refuse(req, res, ServiceUnavailable("no replica answered"));
      std::string type = call->header("Content-Type");
      if (type.empty()) type = "application/json";
      if (stream && type.rfind("text/event-stream", 0) == 0) {
        res.status = call->status();
        RelayHeaders(call->headers(), res);
        res.set_header("X-Prosgrow-Replica", replicas[i]->url);
        return RelayStream(job, std::move(call), i, type, res);
      }
      std::string out;
      if (!call->ReadAll(&out)) {  // broke off before the client saw a byte: try another
        LoseReplica(*job, i, "broke off its answer to");
        continue;
      }
      replicas[i]->inflight--;
      res.status = call->status();
      RelayHeaders(call->headers(), res);
      res.set_header("X-Prosgrow-Replica", replicas[i]->url);
      res.set_content(out, type);
      return;
    }
  }

  std::string MetricsText() const {
    MetricSet m;
    m.Counter("prosgrow_route_requests_total", "Requests the router received.", requests.load());
    m.Counter("prosgrow_route_retries_total", "Requests moved to another replica after one did not answer.",
              retries.load());
    m.Counter("prosgrow_route_resumed_streams_total",
              "Streams continued on another replica after theirs died mid-stream.", resumed_streams.load());
    m.Counter("prosgrow_route_predicted_cached_tokens_total", "Prompt tokens the index said the chosen replica held.",
              predicted_cached_tokens.load());
    MetricFamily& routed = m.Counter("prosgrow_route_replica_requests_total", "Requests routed to each replica.");
    for (const auto& r : replicas) routed.Add({{"replica", r->url}}, r->routed.load());
    MetricFamily& up = m.Gauge("prosgrow_route_replica_up", "Whether the replica answers /health.");
    for (const auto& r : replicas) up.Add({{"replica", r->url}}, r->healthy ? 1 : 0);
    MetricFamily& blocks =
        m.Gauge("prosgrow_route_index_blocks", "Blocks the router believes each replica holds, per medium.");
    for (const auto& r : replicas)
      for (const auto& [medium, n] : r->index.BlocksPerMedium())
        blocks.Add({{"replica", r->url}, {"medium", medium}}, n);
    return m.Render();
  }

  void SetUpRoutes() {
    GuardedHttpServer& srv = *server;
    auto forward = [this](const httplib::Request& req, httplib::Response& res) { Forward(req, res); };
    const char* posts[] = {"/v1/chat/completions",      "/v1/completions", "/v1/messages",
                           "/v1/messages/count_tokens", "/tokenize",       "/apply-template"};
    for (const char* p : posts) srv.Post(p, forward);
    srv.Get("/v1/models", forward);
    srv.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      bool any = false;
      for (auto& r : replicas) any = any || r->healthy;
      res.status = any ? 200 : 503;
      res.set_content(any ? R"({"status":"ok"})" : R"({"status":"no replica"})", "application/json");
    });
    srv.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
    });
    // Known paths with the wrong method, answered as serve answers them.
    auto not_allowed = [](const char* allow) {
      return [allow](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Allow", allow);
        ApiError e = BadRequest(req.method + " is not allowed on " + req.path + " (use " + allow + ")");
        e.http_status = 405;
        Refuse(req, res, e);
      };
    };
    auto refuse = [&](const char* p, const char* allow) { srv.RefuseOtherMethods(p, allow, not_allowed(allow)); };
    for (const char* p : posts) refuse(p, "POST");
    for (const char* p : {"/v1/models", "/health", "/metrics"}) refuse(p, "GET");
    srv.InstallErrorAnswers(
        [](const httplib::Request& req, httplib::Response& res, const ApiError& e) { Refuse(req, res, e); }, nullptr);
  }
};

Result<std::unique_ptr<Router>> Router::Create(RouterOptions options) {
  if (options.replicas.empty()) return InvalidArgument("route: give at least one --replica URL");
  auto impl = std::make_unique<Impl>();
  for (const std::string& url : options.replicas) {
    if (url.rfind("http://", 0) != 0)
      return InvalidArgument(fmt::format("route: replica '{}' is not http://HOST:PORT", url));
    auto r = std::make_unique<Replica>();
    r->url = url;
    impl->replicas.push_back(std::move(r));
  }
  impl->sessions_per_replica.assign(impl->replicas.size(), 0);
  impl->options = std::move(options);
  impl->options.front.host = impl->options.host;
  impl->options.front.port = impl->options.port;
  impl->options.front.api_key.clear();  // clients' keys are the replicas' to check
  impl->options.front.api_key_file.clear();
  PG_RETURN_IF_ERROR(impl->options.front.Validate());
  impl->server = std::make_unique<GuardedHttpServer>(impl->options.front);
  for (auto& r : impl->replicas)
    r->feed = std::make_unique<ReplicaFeed>(r->url, impl->options.api_key, &r->index,
                                            impl->options.kv_events_curve_server_key);
  impl->SetUpRoutes();
  impl->health = std::thread([p = impl.get()] { p->CheckHealth(); });
  return std::unique_ptr<Router>(new Router(std::move(impl)));
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
