// The life of one forwarded request (Router::Impl, router_impl.h): the
// prompt's tokens, the replica's choice, the upstream call with its
// deadlines, failover, and the answer relayed (whole and checked, or as a
// stream that may be continued elsewhere).
#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "route/replica_answer.h"
#include "route/router_impl.h"
#include "route/stream_splicer.h"
#include "server/core/json_body.h"
#include "server/error_response.h"

namespace pg {
namespace {

using json = nlohmann::json;

// The headers a replica needs from the client's request.
httplib::Headers ForwardHeaders(const httplib::Request& req) {
  httplib::Headers out;
  for (const char* k : {"Authorization", "x-api-key", "anthropic-version", "anthropic-beta", "X-Session-Id", "Accept"})
    if (req.has_header(k)) out.emplace(k, req.get_header_value(k));
  return out;
}

// The client's credentials, which scope its session and response names.
std::string CredentialsOf(const httplib::Request& req) {
  return req.get_header_value("Authorization") + "\n" + req.get_header_value("x-api-key");
}

// The session the request names: the released one on /v1/sessions/{id}/release,
// else X-Session-Id, `user` or Anthropic's metadata.user_id. "" = none.
std::string ClientSessionOf(const httplib::Request& req, const json& body) {
  if (req.path.rfind("/v1/sessions/", 0) == 0 && req.matches.size() > 1) return req.matches[1];
  if (req.has_header("X-Session-Id")) return req.get_header_value("X-Session-Id");
  if (!body.is_object()) return "";
  if (auto it = body.find("user"); it != body.end() && it->is_string()) return it->get<std::string>();
  if (auto m = body.find("metadata"); m != body.end() && m->is_object())
    if (auto u = m->find("user_id"); u != m->end() && u->is_string()) return u->get<std::string>();
  return "";
}

// The replica's headers that reach the client (RelayedHeader); the router
// sets Content-Type itself.
void RelayHeaders(const httplib::Headers& from, httplib::Response& res) {
  for (const auto& [k, v] : from)
    if (RelayedHeader(k)) res.set_header(k, v);
}

StreamSplicer::Dialect DialectOf(const std::string& path) {
  if (IsAnthropicPath(path)) return StreamSplicer::Dialect::kAnthropic;
  return path == "/v1/responses" ? StreamSplicer::Dialect::kResponses : StreamSplicer::Dialect::kOpenAi;
}

}  // namespace

// The prompt's token ids and block hashes (the caller's tenant's: the
// client's own headers go along), from the first healthy replica's /tokenize.
PromptBlocks Router::Impl::PromptTokens(const httplib::Request& req) {
  if (options.mode != RouteMode::kCacheAware) return {};
  if (req.path != "/v1/chat/completions" && req.path != "/v1/completions") return {};
  UpstreamLimits tokenize = limits;
  tokenize.max_body_bytes = std::min<int64_t>(limits.max_body_bytes, 16 << 20);
  for (size_t i = 0; i < replicas.size(); ++i) {
    Replica& r = *replicas[i];
    if (!r.healthy) continue;
    auto call =
        UpstreamCall::Start(r.url, "POST", "/tokenize", ForwardHeaders(req), req.body, "application/json", tokenize);
    UpstreamCall::Outcome got = call->WaitHeaders();
    std::string body;
    if (got == UpstreamCall::Outcome::kOk) got = call->ReadAll(&body);
    if (got == UpstreamCall::Outcome::kTimedOut) {
      TakeOut(int(i));
      PG_LOG_WARN("route: {} missed a deadline on /tokenize; taken out", r.url);
    }
    if (got != UpstreamCall::Outcome::kOk) continue;
    if (call->status() != 200) return {};  // the replica will answer the request with the same error
    json j = json::parse(body, nullptr, false);
    PromptBlocks p;
    if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) return p;
    try {
      p.tokens = j["tokens"].get<std::vector<int32_t>>();
      if (j.contains("block_hashes") && j["block_hashes"].is_array())
        p.block_hashes = j["block_hashes"].get<std::vector<EventBlockHash>>();
    } catch (const json::exception&) {
      return {};
    }
    return p;
  }
  return {};
}

int Router::Impl::Choose(const Job& job, int64_t* cached) {
  // A previous_response_id is answered only by the replica holding it.
  if (job.pinned >= 0 && replicas[job.pinned]->healthy && !job.excluded[job.pinned]) {
    *cached = 0;
    return job.pinned;
  }
  const int home = job.has_session ? sessions->Find(job.session) : -1;
  std::vector<ReplicaView> views(replicas.size());
  int64_t block = 16;
  for (size_t i = 0; i < replicas.size(); ++i) {
    Replica& r = *replicas[i];
    views[i].healthy = r.healthy && !job.excluded[i];
    ReplicaIndex::Match m = r.index->Longest(job.tokens.tokens);
    // A replica publishing hashes only is matched on the prompt's hashes.
    if (ReplicaIndex::Match h = r.index->LongestByHashes(job.tokens.block_hashes); h.tokens > m.tokens) m = h;
    views[i].cached_tokens = m.tokens;
    views[i].device_tokens = m.device_tokens;
    views[i].inflight = r.inflight;
    views[i].session_home = home == int(i);
    views[i].sessions = sessions->on_replica(i);
    if (r.index->block_size() > 0) block = r.index->block_size();
  }
  RoutePolicyOptions po;
  po.mode = options.mode;
  po.block_size = block;
  std::lock_guard<std::mutex> lock(mu);
  int i = ChooseReplica(views, po, &turn);
  if (i >= 0) *cached = views[i].cached_tokens;
  return i;
}

// Replica i failed job: it is taken out until the health checker sees it again.
void Router::Impl::LoseReplica(Job& job, int i, const char* what) {
  Replica& r = *replicas[i];
  r.inflight--;
  r.failures++;
  r.healthy = false;
  job.excluded[i] = true;
  retries++;
  PG_LOG_WARN("route: {} {} {}; retrying elsewhere", r.url, what, job.path);
}

// Sends job to the best replica that answers (status and headers) within
// the time-to-first-byte deadline; null when none does. *chosen is its
// index; its in-flight count is raised.
std::shared_ptr<UpstreamCall> Router::Impl::Send(Job& job, int* chosen) {
  for (size_t attempt = 0; attempt < replicas.size(); ++attempt) {
    int64_t cached = 0;
    int i = Choose(job, &cached);
    if (i < 0) return nullptr;
    replicas[i]->inflight++;
    auto call =
        UpstreamCall::Start(replicas[i]->url, job.method, job.path, job.headers, job.body, job.content_type, limits);
    const UpstreamCall::Outcome got = call->WaitHeaders();
    if (got == UpstreamCall::Outcome::kOk) {
      replicas[i]->routed++;
      predicted_cached_tokens += uint64_t(cached);
      *chosen = i;
      return call;
    }
    if (got == UpstreamCall::Outcome::kTimedOut) {
      TakeOut(i);
      deadline_failovers++;
      LoseReplica(job, i, "missed its time-to-first-byte deadline (--upstream-ttfb-timeout) for");
    } else {
      LoseReplica(job, i, "did not answer");
    }
  }
  return nullptr;
}

void Router::Impl::Answered(const Job& job, int i, const std::string& response_id) {
  if (job.path.rfind("/v1/sessions/", 0) == 0) {
    if (job.has_session) sessions->Forget(job.session);  // released: it has no home now
    return;
  }
  if (job.has_session) sessions->Record(job.session, i);
  if (!response_id.empty()) responses->Record(MakeAffinityKey(job.credentials, response_id), i);
}

bool Router::Impl::RelayWhole(Job& job, std::shared_ptr<UpstreamCall> call, int i, const httplib::Request& req,
                              httplib::Response& res) {
  std::string out;
  const UpstreamCall::Outcome got = call->ReadAll(&out);
  if (got == UpstreamCall::Outcome::kTimedOut) {
    TakeOut(i);
    deadline_failovers++;
    LoseReplica(job, i, "went silent past its idle deadline (--upstream-idle-timeout) answering");
    return false;
  }
  if (got == UpstreamCall::Outcome::kFailed) {  // broke off before the client saw a byte: try another
    LoseReplica(job, i, "broke off its answer to");
    return false;
  }
  replicas[i]->inflight--;
  if (got == UpstreamCall::Outcome::kTooLarge) {
    oversized_answers++;
    replicas[i]->bad_answers++;
    PG_LOG_WARN("route: {} answered {} with more than {} bytes; 502", replicas[i]->url, job.path,
                limits.max_body_bytes);
    RefuseInPathShape(req, res,
                      BadGateway(fmt::format("the replica's answer is larger than the router relays "
                                             "(--upstream-max-body-bytes {})",
                                             limits.max_body_bytes)));
    return true;
  }
  if (!IsJsonText(out)) {
    invalid_answers++;
    replicas[i]->bad_answers++;
    PG_LOG_WARN("route: {} answered {} with a body that is not JSON; 502", replicas[i]->url, job.path);
    RefuseInPathShape(req, res, BadGateway("the replica's answer is not JSON"));
    return true;
  }
  const int status = call->status();
  if (status / 100 == 2) Answered(job, i, job.path == "/v1/responses" ? TopLevelId(out) : "");
  res.status = status;
  RelayHeaders(call->headers(), res);
  res.set_header("X-Prosgrow-Replica", replicas[i]->url);
  res.body = std::move(out);
  res.set_header("Content-Type", "application/json");
  return true;
}

void Router::Impl::Forward(const httplib::Request& req, httplib::Response& res) {
  if (!server->BeginHandling(req, res)) return;  // a chunked body past --max-body-bytes
  requests++;
  json body;
  const bool release = req.path.rfind("/v1/sessions/", 0) == 0;  // serve reads no body there
  if (req.method == "POST" && !release) {
    // Parsed as serve parses it (UTF-8, bounded depth): what serve refuses
    // is refused here with the same answer, before any replica sees it.
    ApiResult<nlohmann::ordered_json> parsed = ParseJsonBody(req.body, options.front.limits.max_json_depth);
    if (!parsed.ok()) return RefuseInPathShape(req, res, parsed.error);
    body = json(parsed.value);
  }
  const bool stream = body.is_object() && body.value("stream", false) == true;
  auto job = std::make_shared<Job>();
  job->method = req.method;
  job->path = req.path;
  job->body = req.body;
  job->content_type = req.get_header_value("Content-Type");
  job->credentials = CredentialsOf(req);
  if (const std::string name = ClientSessionOf(req, body); !name.empty()) {
    job->has_session = true;
    job->session = MakeAffinityKey(job->credentials, name);
  }
  if (body.is_object())
    if (auto p = body.find("previous_response_id"); p != body.end() && p->is_string())
      job->pinned = responses->Find(MakeAffinityKey(job->credentials, p->get<std::string>()));
  if (job->pinned < 0 && release && job->has_session)
    job->pinned = sessions->Find(job->session);  // released where it lives
  job->headers = ForwardHeaders(req);
  job->tokens = PromptTokens(req);
  job->excluded.assign(replicas.size(), false);
  for (;;) {
    int i = -1;
    auto call = Send(*job, &i);
    if (!call) return RefuseInPathShape(req, res, ServiceUnavailable("no replica answered"));
    if (!ValidReplicaStatus(call->status())) {
      replicas[i]->inflight--;
      replicas[i]->bad_answers++;
      invalid_answers++;
      PG_LOG_WARN("route: {} answered {} with HTTP status {}; 502", replicas[i]->url, job->path, call->status());
      return RefuseInPathShape(
          req, res,
          BadGateway(fmt::format("the replica answered with HTTP status {}, not a valid one", call->status())));
    }
    std::string type = call->header("Content-Type");
    if (stream && type.rfind("text/event-stream", 0) == 0) {
      if (call->status() / 100 == 2) Answered(*job, i, "");  // a Responses stream's id comes with its first event
      res.status = call->status();
      RelayHeaders(call->headers(), res);
      res.set_header("X-Prosgrow-Replica", replicas[i]->url);
      return RelayStream(job, std::move(call), i, type, res);
    }
    if (RelayWhole(*job, std::move(call), i, req, res)) return;
  }
}

// Relays an event stream. When its replica dies or goes silent past the
// idle deadline mid-stream, the request goes to another replica and
// StreamSplicer continues the client's stream from where it broke (or ends
// it with an error event when it cannot).
void Router::Impl::RelayStream(std::shared_ptr<Job> job, std::shared_ptr<UpstreamCall> call, int i,
                               const std::string& type, httplib::Response& res) {
  auto splicer = std::make_shared<StreamSplicer>(DialectOf(job->path));
  auto cur = std::make_shared<std::pair<std::shared_ptr<UpstreamCall>, int>>(std::move(call), i);
  auto id_seen = std::make_shared<bool>(job->path != "/v1/responses");
  res.set_chunked_content_provider(type, [this, job, splicer, cur, id_seen](size_t, httplib::DataSink& sink) {
    std::string chunk, out;
    for (;;) {
      auto& [up, r] = *cur;
      while (up->NextChunk(&chunk)) {
        out.clear();
        splicer->Feed(chunk, &out);
        if (splicer->diverged()) break;
        if (!*id_seen) {
          if (std::string id = CreatedResponseId(out); !id.empty()) {
            *id_seen = true;
            responses->Record(MakeAffinityKey(job->credentials, id), r);
          }
        }
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
        if (up->timed_out()) {
          TakeOut(r);
          deadline_failovers++;
        }
        LoseReplica(
            *job, r,
            up->timed_out() ? "went silent mid-stream (--upstream-idle-timeout) for" : "broke off its stream for");
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

}  // namespace pg
