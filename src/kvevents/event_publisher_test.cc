#include "kvevents/event_publisher.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <msgpack.hpp>
#include <thread>
#include <zmq.hpp>

#include "kvevents/event_encoder.h"
#include "kvevents/event_sequence.h"

namespace pg {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

KvEventBatch SampleBatch(double ts) {
  BlockStoredEvent stored;
  stored.block_hashes = {11, 12};
  stored.token_ids = {1, 2, 3, 4};
  stored.block_size = 2;
  stored.medium = kMediumDevice;
  BlockStoredEvent child = stored;
  child.block_hashes = {13};
  child.parent_block_hash = 12;
  child.token_ids = {5, 6};
  child.medium = kMediumHost;
  KvEventBatch b;
  b.ts = ts;
  b.events = {stored, child, BlockRemovedEvent{{11}, kMediumDevice}, AllBlocksClearedEvent{}};
  return b;
}

// Decodes with msgpack's generic object model, field by field as vLLM's
// msgspec types define them, independent of the encoder's code paths.
TEST(EventEncoder, MatchesVllmArrayLikeTaggedLayout) {
  KvEventBatch b = SampleBatch(12.5);
  std::string bytes = EncodeKvEventBatch(b);
  msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size());
  auto batch = oh.get().as<std::vector<msgpack::object>>();
  ASSERT_EQ(batch.size(), 2u);  // no data_parallel_rank
  EXPECT_DOUBLE_EQ(batch[0].as<double>(), 12.5);
  auto events = batch[1].as<std::vector<msgpack::object>>();
  ASSERT_EQ(events.size(), 4u);
  auto e0 = events[0].as<std::vector<msgpack::object>>();
  ASSERT_EQ(e0.size(), 7u);
  EXPECT_EQ(e0[0].as<std::string>(), "BlockStored");
  EXPECT_EQ(e0[1].as<std::vector<uint64_t>>(), (std::vector<uint64_t>{11, 12}));
  EXPECT_TRUE(e0[2].is_nil());
  EXPECT_EQ(e0[3].as<std::vector<int>>(), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(e0[4].as<int>(), 2);
  EXPECT_TRUE(e0[5].is_nil());
  EXPECT_EQ(e0[6].as<std::string>(), "GPU");
  auto e1 = events[1].as<std::vector<msgpack::object>>();
  EXPECT_EQ(e1[2].as<uint64_t>(), 12u);
  EXPECT_EQ(e1[6].as<std::string>(), "CPU");
  auto e2 = events[2].as<std::vector<msgpack::object>>();
  ASSERT_EQ(e2.size(), 3u);
  EXPECT_EQ(e2[0].as<std::string>(), "BlockRemoved");
  EXPECT_EQ(e2[1].as<std::vector<uint64_t>>(), (std::vector<uint64_t>{11}));
  auto e3 = events[3].as<std::vector<msgpack::object>>();
  ASSERT_EQ(e3.size(), 1u);
  EXPECT_EQ(e3[0].as<std::string>(), "AllBlocksCleared");
  b.data_parallel_rank = 3;
  bytes = EncodeKvEventBatch(b);
  oh = msgpack::unpack(bytes.data(), bytes.size());
  batch = oh.get().as<std::vector<msgpack::object>>();
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[2].as<int>(), 3);
}

TEST(EventEncoder, HashIsFirst63BitsBigEndian) {
  uint8_t sha[32] = {0x80, 0, 0, 0, 0, 0, 0, 0x03};
  EXPECT_EQ(EventHashOf(sha), (uint64_t{0x8000000000000003} >> 1));
  uint8_t ones[32];
  std::fill(std::begin(ones), std::end(ones), 0xff);
  EXPECT_EQ(EventHashOf(ones), uint64_t{0x7fffffffffffffff});
}

uint64_t Seq(const zmq::message_t& m) {
  uint64_t v = 0;
  for (size_t i = 0; i < m.size(); ++i) v = (v << 8) | static_cast<const uint8_t*>(m.data())[i];
  return v;
}

TEST(EventPublisher, PublishesSequencedBatchesAndReplays) {
  std::string ep = "tcp://*:" + std::to_string(FreePort());
  std::string replay_ep = "tcp://*:" + std::to_string(FreePort());
  KvEventPublisherOptions o;
  o.endpoint = ep;
  o.replay_endpoint = replay_ep;
  auto pub = KvEventPublisher::Create(o);
  ASSERT_TRUE(pub.ok()) << pub.status().message();
  zmq::context_t ctx;
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::subscribe, "");
  sub.set(zmq::sockopt::rcvtimeo, 200);
  sub.set(zmq::sockopt::linger, 0);
  sub.connect("tcp://127.0.0.1:" + ep.substr(ep.rfind(':') + 1));
  // PUB drops messages until the subscription arrives: publish until one lands.
  zmq::message_t topic, seq, payload;
  bool got = false;
  for (int i = 0; i < 50 && !got; ++i) {
    (*pub)->Publish(SampleBatch(i));
    got = sub.recv(topic, zmq::recv_flags::none).has_value();
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(topic.size(), 0u);
  ASSERT_TRUE(topic.more());
  ASSERT_TRUE(sub.recv(seq).has_value());
  ASSERT_EQ(seq.size(), 8u);
  ASSERT_TRUE(sub.recv(payload).has_value());
  EXPECT_FALSE(payload.more());
  uint64_t first = Seq(seq);
  (*pub)->Publish(SampleBatch(100));
  ASSERT_TRUE(sub.recv(topic).has_value());
  ASSERT_TRUE(sub.recv(seq).has_value());
  ASSERT_TRUE(sub.recv(payload).has_value());
  EXPECT_EQ(Seq(seq), first + 1);  // consecutive
  auto oh = msgpack::unpack(static_cast<const char*>(payload.data()), payload.size());
  EXPECT_DOUBLE_EQ(oh.get().as<std::vector<msgpack::object>>()[0].as<double>(), 100.0);

  // Replay from 0: every batch so far, in order, then the end marker.
  zmq::socket_t req(ctx, zmq::socket_type::req);
  req.set(zmq::sockopt::rcvtimeo, 2000);
  req.set(zmq::sockopt::linger, 0);
  req.connect("tcp://127.0.0.1:" + replay_ep.substr(replay_ep.rfind(':') + 1));
  std::string start(8, '\0');
  req.send(zmq::buffer(start));
  // A REQ socket takes one reply at a time; a DEALER would stream them. The
  // first reply is seq 0.
  zmq::message_t rseq, rpayload;
  ASSERT_TRUE(req.recv(rseq).has_value());
  ASSERT_TRUE(req.recv(rpayload).has_value());
  EXPECT_EQ(Seq(rseq), 0u);
  EXPECT_GT(rpayload.size(), 0u);
  EXPECT_EQ((*pub)->dropped(), 0u);
  EXPECT_GE((*pub)->sent(), first + 2);
}

TEST(EventSequence, EightBytesBigEndianWithAllOnesAsEnd) {
  EXPECT_EQ(EncodeEventSeq(0x0102030405060708ull), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_EQ(DecodeEventSeq(EncodeEventSeq(0x0102030405060708ull)), 0x0102030405060708ull);
  EXPECT_EQ(EncodeEventSeq(kEventSeqEnd), std::string(8, '\xff'));
  EXPECT_EQ(DecodeEventSeq(std::string(8, '\xff')), kEventSeqEnd);
}

TEST(EventPublisher, BindsWildcardsConnectsElsewhere) {
  EXPECT_TRUE(PublisherBinds("tcp://*:5557"));
  EXPECT_TRUE(PublisherBinds("tcp://[::]:5557"));
  EXPECT_TRUE(PublisherBinds("ipc:///tmp/kv"));
  EXPECT_TRUE(PublisherBinds("tcp://127.0.0.1:5557"));  // loopback: bound, only this host subscribes
  EXPECT_TRUE(PublisherBinds("tcp://localhost:5557"));
  EXPECT_FALSE(PublisherBinds("tcp://127.0.0.2:5557"));
  EXPECT_FALSE(PublisherBinds("tcp://10.0.0.7:5557"));
  EXPECT_FALSE(PublisherBinds("tcp://epp.default.svc:5557"));
}

// llm-d's layout: the subscriber binds, the model server's PUB connects and
// names itself in the topic.
TEST(EventPublisher, ConnectsToABoundSubscriberWithTopic) {
  zmq::context_t ctx;
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::subscribe, "kv@");
  sub.set(zmq::sockopt::rcvtimeo, 200);
  sub.set(zmq::sockopt::linger, 0);
  const int port = FreePort();
  sub.bind("tcp://127.0.0.2:" + std::to_string(port));  // another loopback address: connected to
  KvEventPublisherOptions o;
  o.endpoint = "tcp://127.0.0.2:" + std::to_string(port);
  o.topic = "kv@10.0.0.7@tiny";
  auto pub = KvEventPublisher::Create(o);
  ASSERT_TRUE(pub.ok()) << pub.status().message();
  zmq::message_t topic;
  bool got = false;
  for (int i = 0; i < 50 && !got; ++i) {
    (*pub)->Publish(SampleBatch(i));
    got = sub.recv(topic).has_value();
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(topic.to_string(), "kv@10.0.0.7@tiny");
}

TEST(EventPublisher, BindErrorNamesTheEndpoint) {
  std::string ep = "tcp://*:" + std::to_string(FreePort());
  auto a = KvEventPublisher::Create({ep});
  ASSERT_TRUE(a.ok());
  auto b = KvEventPublisher::Create({ep});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find(ep), std::string::npos) << b.status().message();
  EXPECT_FALSE(KvEventPublisher::Create({"nonsense"}).ok());
}

TEST(EventPublisher, FullQueueDropsOldestNeverBlocks) {
  std::string ep = "tcp://*:" + std::to_string(FreePort());
  KvEventPublisherOptions o{ep};
  o.max_queue = 2;
  auto pub = KvEventPublisher::Create(o);
  ASSERT_TRUE(pub.ok());
  for (int i = 0; i < 1000; ++i) (*pub)->Publish(SampleBatch(i));
  // Every batch is either sent or counted as dropped; none waits forever.
  for (int i = 0; i < 500 && (*pub)->sent() + (*pub)->dropped() < 1000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ((*pub)->sent() + (*pub)->dropped(), 1000u);
}

}  // namespace
}  // namespace pg
