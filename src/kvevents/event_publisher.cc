#include "kvevents/event_publisher.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "base/log.h"
#include "base/stop_and_join.h"
#include "kvevents/event_encoder.h"
#include "kvevents/event_sequence.h"

namespace pg {

struct KvEventPublisher::Sockets {
  zmq::context_t ctx{1};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  zmq::socket_t replay;                                 // unset without a replay endpoint
  std::deque<std::pair<uint64_t, std::string>> buffer;  // (seq, payload) for replay
  uint64_t next_seq = 0;
};

namespace {

// Answers one replay request, if one is waiting.
void ServiceReplay(KvEventPublisher::Sockets& s) {
  std::vector<zmq::message_t> frames;
  while (true) {
    zmq::message_t m;
    if (!s.replay.recv(m, zmq::recv_flags::dontwait)) return;
    bool more = m.more();
    frames.push_back(std::move(m));
    if (!more) break;
  }
  if (frames.size() < 2 || frames.back().size() != 8) return;  // not a replay request
  uint64_t start = DecodeEventSeq(frames.back().to_string_view());
  std::string id(static_cast<const char*>(frames.front().data()), frames.front().size());
  auto send = [&](const std::string& seq, const std::string& payload) {
    s.replay.send(zmq::buffer(id), zmq::send_flags::sndmore);
    s.replay.send(zmq::message_t(), zmq::send_flags::sndmore);
    s.replay.send(zmq::buffer(seq), zmq::send_flags::sndmore);
    s.replay.send(zmq::buffer(payload), zmq::send_flags::none);
  };
  for (const auto& [seq, payload] : s.buffer)
    if (seq >= start) send(EncodeEventSeq(seq), payload);
  send(EncodeEventSeq(kEventSeqEnd), "");
}

}  // namespace

bool PublisherBinds(const std::string& endpoint) {
  for (const char* loopback : {"tcp://127.0.0.1:", "tcp://localhost:", "tcp://[::1]:"})
    if (endpoint.rfind(loopback, 0) == 0) return true;
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0;
}

Result<std::string> CurvePublicKey(const std::string& secret_key) {
  if (!zmq_has("curve")) return Unimplemented("KV events: this libzmq has no CURVE support (built without libsodium)");
  char pub[41] = {};
  if (secret_key.size() != 40 || zmq_curve_public(pub, secret_key.c_str()) != 0) {
    return InvalidArgument("KV events: the CURVE secret key must be 40 Z85 characters");
  }
  return std::string(pub);
}

Result<std::unique_ptr<KvEventPublisher>> KvEventPublisher::Create(const KvEventPublisherOptions& options) {
  auto sockets = std::make_unique<Sockets>();
  std::string public_key;
  if (!options.curve_secret_key.empty()) {
    PG_ASSIGN_OR_RETURN(public_key, CurvePublicKey(options.curve_secret_key));
  }
  // A CURVE server socket: only peers that know public_key complete the handshake.
  auto curve = [&](zmq::socket_t& s) {
    if (public_key.empty()) return;
    s.set(zmq::sockopt::curve_server, true);
    s.set(zmq::sockopt::curve_secretkey, options.curve_secret_key);
  };
  try {
    curve(sockets->pub);
    sockets->pub.set(zmq::sockopt::sndhwm, 100000);
    sockets->pub.set(zmq::sockopt::linger, 1000);
    if (PublisherBinds(options.endpoint)) {
      sockets->pub.bind(options.endpoint);
    } else {
      sockets->pub.connect(options.endpoint);
    }
    if (!options.replay_endpoint.empty()) {
      sockets->replay = zmq::socket_t(sockets->ctx, zmq::socket_type::router);
      sockets->replay.set(zmq::sockopt::linger, 0);
      curve(sockets->replay);
      sockets->replay.bind(options.replay_endpoint);
    }
  } catch (const zmq::error_t& e) {
    return InvalidArgument(fmt::format("KV events: cannot open {}{}: {}", options.endpoint,
                                       options.replay_endpoint.empty() ? "" : " / " + options.replay_endpoint,
                                       e.what()));
  }
  auto publisher = std::unique_ptr<KvEventPublisher>(new KvEventPublisher(options, std::move(sockets)));
  publisher->curve_public_key_ = public_key;
  return publisher;
}

KvEventPublisher::KvEventPublisher(KvEventPublisherOptions options, std::unique_ptr<Sockets> sockets)
    : options_(std::move(options)), sockets_(std::move(sockets)) {
  thread_ = std::thread([this] { Run(); });
}

KvEventPublisher::~KvEventPublisher() { StopAndJoin(mu_, &stop_, {&cv_}, {&thread_}); }

void KvEventPublisher::Publish(KvEventBatch batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= options_.max_queue) {
      queue_.pop_front();
      dropped_.fetch_add(1);
    }
    queue_.push_back(std::move(batch));
  }
  cv_.notify_one();
}

void KvEventPublisher::Run() {
  Sockets& s = *sockets_;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (true) {
    std::deque<KvEventBatch> todo;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stop_ || !queue_.empty(); });
      todo.swap(queue_);
      if (stop_ && deadline == std::chrono::steady_clock::time_point::max())
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    for (KvEventBatch& b : todo) {
      std::string payload = EncodeKvEventBatch(b);
      uint64_t seq = s.next_seq++;
      try {
        s.pub.send(zmq::buffer(options_.topic), zmq::send_flags::sndmore);
        s.pub.send(zmq::buffer(EncodeEventSeq(seq)), zmq::send_flags::sndmore);
        s.pub.send(zmq::buffer(payload), zmq::send_flags::none);
        sent_.fetch_add(1);
      } catch (const zmq::error_t& e) {
        PG_LOG_WARN("KV events: send failed: {}", e.what());
      }
      s.buffer.emplace_back(seq, std::move(payload));
      if (s.buffer.size() > options_.replay_batches) s.buffer.pop_front();
    }
    if (s.replay) ServiceReplay(s);
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && (queue_.empty() || std::chrono::steady_clock::now() > deadline)) return;
  }
}

}  // namespace pg
