// KvEventPublisher: puts KV event batches on a ZMQ PUB socket as vLLM's
// ZmqEventPublisher does, so the consumers of vLLM's events (llm-d's
// precise prefix-cache scorer, Dynamo's KV indexer, `prosgrow route`) can
// subscribe to prosgrow replicas unchanged:
//   PUB     every batch as a 3-frame message: topic (empty), sequence
//           number (8 bytes, big-endian, from 0), payload (event_encoder.h)
//   ROUTER  (optional replay endpoint) a request whose last frame is an
//           8-byte big-endian start sequence gets back, for every buffered
//           batch from that sequence on, [identity, "", seq, payload], then
//           the end marker [identity, "", -1 as 8 bytes, ""].
// The PUB endpoint is bound when it is a wildcard (tcp://*:PORT, one with
// "::"), loopback (tcp://127.0.0.1:PORT, localhost, [::1]: only this host
// can subscribe; vLLM would connect there) or ipc:// / inproc://, and
// connected to otherwise, as vLLM decides:
// llm-d's endpoint picker binds one SUB socket that every model server's
// PUB connects to, with a topic naming the pod ("kv@POD@MODEL"). The replay
// endpoint is always bound.
//
// Publish() never blocks and never fails: batches go to a bounded queue that
// one background thread drains (encode, send, keep for replay). When the
// queue is full the oldest batch is dropped and counted, so a slow network
// can cost events (a subscriber sees the sequence gap and can replay), never
// an engine step.
//
// Thread-safety: Publish() and the counters may be called from any thread;
// the sockets belong to the background thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "kvevents/kv_event.h"

namespace pg {

struct KvEventPublisherOptions {
  std::string endpoint;         // bound or connected (PublisherBinds)
  std::string topic;            // first frame of every message ("" = none)
  std::string replay_endpoint;  // "" = no replay socket
  size_t max_queue = 4096;      // batches waiting to be sent
  size_t replay_batches = 10000;
  // ZMQ CURVE (libzmq built with libsodium): this publisher's secret key, 40
  // Z85 characters. Both sockets are then CURVE servers: a subscriber must
  // know the matching public key (CurvePublicKey; GET /kv-events reports
  // it behind the API key) to receive anything. "" = plain ZMQ.
  std::string curve_secret_key;
};

// The Z85 public key of a Z85 CURVE secret key; InvalidArgument when it is
// not one, Unimplemented when this libzmq has no CURVE.
Result<std::string> CurvePublicKey(const std::string& secret_key);

// Whether the publisher binds `endpoint` (else it connects to it).
bool PublisherBinds(const std::string& endpoint);

class KvEventPublisher {
 public:
  // Binds the sockets (errors such as "address in use" are returned here,
  // naming the endpoint) and starts the sending thread.
  static Result<std::unique_ptr<KvEventPublisher>> Create(const KvEventPublisherOptions& options);
  ~KvEventPublisher();  // sends what is queued (up to 1 s), then closes

  void Publish(KvEventBatch batch);

  uint64_t sent() const { return sent_.load(); }
  uint64_t dropped() const { return dropped_.load(); }
  const std::string& endpoint() const { return options_.endpoint; }
  const std::string& replay_endpoint() const { return options_.replay_endpoint; }
  // Z85 CURVE public key of the sockets; "" without CURVE.
  const std::string& curve_public_key() const { return curve_public_key_; }

  struct Sockets;  // the ZMQ context and sockets (event_publisher.cc)

 private:
  KvEventPublisher(KvEventPublisherOptions options, std::unique_ptr<Sockets> sockets);
  void Run();

  KvEventPublisherOptions options_;
  std::string curve_public_key_;
  std::unique_ptr<Sockets> sockets_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<KvEventBatch> queue_;
  bool stop_ = false;
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace pg
