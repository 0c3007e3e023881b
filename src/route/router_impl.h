// Router::Impl (router.h), shared by router.cc (set-up, health, metrics,
// routes) and router_forward.cc (the life of one forwarded request).
// Private to src/route.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "route/affinity_table.h"
#include "route/replica_feed.h"
#include "route/replica_index.h"
#include "route/router.h"
#include "route/upstream_call.h"
#include "server/http/guarded_http_server.h"

namespace pg {

struct Replica {
  std::string url;
  std::unique_ptr<ReplicaIndex> index;
  std::unique_ptr<ReplicaFeed> feed;
  std::atomic<bool> healthy{false};
  // A replica that missed a deadline stays out until then (steady clock, ms),
  // whatever its /health says.
  std::atomic<int64_t> out_until_ms{0};
  std::atomic<int64_t> inflight{0};
  std::atomic<uint64_t> routed{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> deadlines_missed{0};
  std::atomic<uint64_t> bad_answers{0};
};

struct Router::Impl {
  // A client request as the router sends it upstream (again, on failover).
  struct Job {
    std::string method, path, body, content_type;
    std::string credentials;  // Authorization and x-api-key: they scope the client's names
    bool has_session = false;
    AffinityKey session;  // the client's session (credentials + name), when it names one
    int pinned = -1;      // the replica holding its previous_response_id (-1: none known)
    httplib::Headers headers;
    PromptBlocks tokens;
    std::vector<bool> excluded;  // replicas that failed this request
  };

  RouterOptions options;
  UpstreamLimits limits;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::unique_ptr<GuardedHttpServer> server;
  std::unique_ptr<AffinityTable> sessions;   // session -> replica
  std::unique_ptr<AffinityTable> responses;  // Responses answer id -> replica
  std::mutex mu;                             // turn
  uint64_t turn = 0;
  std::atomic<uint64_t> retries{0}, predicted_cached_tokens{0}, requests{0}, resumed_streams{0};
  std::atomic<uint64_t> deadline_failovers{0}, oversized_answers{0}, invalid_answers{0};
  std::atomic<bool> stop{false};
  std::thread health;

  // router.cc
  void CheckHealth();
  void TakeOut(int i);  // a missed deadline: out for options.upstream_quarantine_s
  std::string MetricsText() const;
  void SetUpRoutes();

  // router_forward.cc
  PromptBlocks PromptTokens(const httplib::Request& req);
  int Choose(const Job& job, int64_t* cached);
  void LoseReplica(Job& job, int i, const char* what);
  std::shared_ptr<UpstreamCall> Send(Job& job, int* chosen);
  void RelayStream(std::shared_ptr<Job> job, std::shared_ptr<UpstreamCall> call, int i, const std::string& type,
                   httplib::Response& res);
  // After a replica answered job 2xx: its session and Responses id go there.
  void Answered(const Job& job, int i, const std::string& response_id);
  void Forward(const httplib::Request& req, httplib::Response& res);
  // Forward's non-streamed answer: read whole (bounded), checked, relayed.
  // False when the replica broke off or missed a deadline (try another).
  bool RelayWhole(Job& job, std::shared_ptr<UpstreamCall> call, int i, const httplib::Request& req,
                  httplib::Response& res);
};

// The router's own errors, in the shape of the path's API as serve writes them.
void RefuseInPathShape(const httplib::Request& req, httplib::Response& res, const ApiError& e);

}  // namespace pg
