#include "route/replica_feed.h"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "base/log.h"
#include "kvevents/event_sequence.h"
#include "route/event_decoder.h"

namespace pg {
namespace {

std::string HostOf(const std::string& base_url) {
  std::string rest = base_url.substr(base_url.find("//") == std::string::npos ? 0 : base_url.find("//") + 2);
  rest = rest.substr(0, rest.find('/'));
  size_t colon = rest.rfind(':');
  return colon == std::string::npos ? rest : rest.substr(0, colon);
}

}  // namespace

std::string ResolveEventEndpoint(const std::string& endpoint, const std::string& base_url) {
  size_t scheme = endpoint.find("://");
  size_t colon = endpoint.rfind(':');
  if (scheme == std::string::npos || colon == std::string::npos || colon <= scheme + 3) return endpoint;
  std::string host = endpoint.substr(scheme + 3, colon - scheme - 3);
  if (host != "*" && host != "0.0.0.0") return endpoint;
  return endpoint.substr(0, scheme + 3) + HostOf(base_url) + endpoint.substr(colon);
}

bool EndpointOfReplica(const std::string& endpoint, const std::string& base_url) {
  const std::string host = HostOf(base_url);
  if (endpoint.rfind("ipc://", 0) == 0) return host == "127.0.0.1" || host == "localhost" || host == "[::1]";
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  const std::string rest = endpoint.substr(6);
  const size_t colon = rest.rfind(':');
  return colon != std::string::npos && rest.substr(0, colon) == host;
}

ReplicaFeed::ReplicaFeed(std::string base_url, std::string api_key, ReplicaIndex* index, std::string curve_server_key)
    : base_url_(std::move(base_url)),
      api_key_(std::move(api_key)),
      curve_server_key_(std::move(curve_server_key)),
      index_(index) {
  thread_ = std::thread([this] { Run(); });
}

ReplicaFeed::~ReplicaFeed() {
  stop_ = true;
  thread_.join();
}

void ReplicaFeed::Run() {
  while (!stop_) {
    httplib::Client cli(base_url_);
    cli.set_connection_timeout(1);
    cli.set_read_timeout(2);
    httplib::Headers h;
    if (!api_key_.empty()) h.emplace("Authorization", "Bearer " + api_key_);
    auto res = cli.Get("/kv-events", h);
    if (res && res->status == 200) {
      auto info = nlohmann::json::parse(res->body, nullptr, false);
      const std::string advertised = info.is_object() ? info.value("curve_public_key", "") : "";
      const std::string endpoint =
          info.is_object() ? ResolveEventEndpoint(info.value("endpoint", ""), base_url_) : std::string();
      const std::string replay = info.is_object() && !info.value("replay_endpoint", "").empty()
                                     ? ResolveEventEndpoint(info.value("replay_endpoint", ""), base_url_)
                                     : std::string();
      if (!curve_server_key_.empty() && !advertised.empty() && advertised != curve_server_key_) {
        PG_LOG_WARN("route: {} advertises a CURVE key other than --kv-events-curve-server-key; not following it",
                    base_url_);
      } else if (!endpoint.empty() && (!EndpointOfReplica(endpoint, base_url_) ||
                                       (!replay.empty() && !EndpointOfReplica(replay, base_url_)))) {
        if (!warned_foreign_)
          PG_LOG_WARN("route: {} advertises KV events at {} {}, not on its own host; not followed", base_url_, endpoint,
                      replay);
        warned_foreign_ = true;
      } else if (!endpoint.empty()) {
        Follow(endpoint, replay, curve_server_key_.empty() ? advertised : curve_server_key_);
      } else {
        PG_LOG_WARN("route: {} answers /kv-events without an endpoint", base_url_);
      }
    }
    subscribed_ = false;
    index_->Clear();
    for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void ReplicaFeed::Follow(const std::string& endpoint, const std::string& replay_endpoint,
                         const std::string& curve_key) {
  zmq::context_t ctx;
  // A CURVE client of the replica's key, with a key pair of its own.
  char client_public[41] = {}, client_secret[41] = {};
  if (!curve_key.empty() && zmq_curve_keypair(client_public, client_secret) != 0) {
    PG_LOG_WARN("route: {}: cannot make a CURVE key pair (libzmq without CURVE?)", base_url_);
    return;
  }
  auto curve = [&](zmq::socket_t& s) {
    if (curve_key.empty()) return;
    s.set(zmq::sockopt::curve_serverkey, curve_key);
    s.set(zmq::sockopt::curve_publickey, std::string(client_public));
    s.set(zmq::sockopt::curve_secretkey, std::string(client_secret));
  };
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  curve(sub);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::subscribe, "");
  sub.set(zmq::sockopt::rcvtimeo, 200);
  sub.connect(endpoint);
  int64_t last = -1;  // last applied sequence
  auto apply = [&](uint64_t seq, const zmq::message_t& payload) {
    if (seq == 0 && last >= 0) last = -1;  // the replica restarted: its batch 0 clears
    if (int64_t(seq) <= last) return;
    auto batch = DecodeKvEventBatch(std::string_view(static_cast<const char*>(payload.data()), payload.size()));
    if (!batch.ok()) {
      PG_LOG_WARN("route: {}: {}", base_url_, batch.status().message());
      return;
    }
    index_->Apply(*batch);
    last = int64_t(seq);
    batches_++;
  };
  auto replay = [&](uint64_t from) {
    if (replay_endpoint.empty()) return false;
    zmq::socket_t req(ctx, zmq::socket_type::dealer);
    req.set(zmq::sockopt::linger, 0);
    req.set(zmq::sockopt::rcvtimeo, 2000);
    curve(req);
    req.connect(replay_endpoint);
    req.send(zmq::message_t(), zmq::send_flags::sndmore);
    req.send(zmq::buffer(EncodeEventSeq(from)), zmq::send_flags::none);
    while (true) {
      zmq::message_t empty, seq, payload;
      if (!req.recv(empty) || !req.recv(seq) || !req.recv(payload)) return false;
      if (DecodeEventSeq(seq.to_string_view()) == kEventSeqEnd) return true;
      apply(DecodeEventSeq(seq.to_string_view()), payload);
    }
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the subscription reach the publisher
  if (!replay(0) && !replay_endpoint.empty()) return;
  subscribed_ = true;
  auto quiet_since = std::chrono::steady_clock::now();
  while (!stop_) {
    zmq::message_t topic, seq, payload;
    if (!sub.recv(topic)) {
      // No event for a while: is the replica still there?
      if (std::chrono::steady_clock::now() - quiet_since > std::chrono::seconds(2)) {
        httplib::Client cli(base_url_);
        cli.set_connection_timeout(1);
        if (!cli.Get("/health")) return;
        quiet_since = std::chrono::steady_clock::now();
      }
      continue;
    }
    quiet_since = std::chrono::steady_clock::now();
    if (!topic.more() || !sub.recv(seq) || !seq.more() || !sub.recv(payload)) continue;
    const uint64_t s = DecodeEventSeq(seq.to_string_view());
    if (last >= 0 && s > uint64_t(last) + 1 && s != 0) {
      gaps_++;
      if (!replay(uint64_t(last) + 1)) index_->Clear(), last = int64_t(s) - 1;
    }
    apply(s, payload);
  }
}

}  // namespace pg
