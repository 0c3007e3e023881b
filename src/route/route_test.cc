#include <gtest/gtest.h>

#include "kvevents/event_encoder.h"
#include "route/event_decoder.h"
#include "route/replica_feed.h"
#include "route/replica_index.h"
#include "route/route_policy.h"
#include "route/router.h"

namespace pg {
namespace {

BlockStoredEvent Stored(std::vector<EventBlockHash> hashes, std::optional<EventBlockHash> parent,
                        std::vector<int32_t> tokens, const char* medium) {
  BlockStoredEvent e;
  e.block_hashes = std::move(hashes);
  e.parent_block_hash = parent;
  e.token_ids = std::move(tokens);
  e.block_size = 2;
  e.medium = medium;
  return e;
}

TEST(EventDecoder, RoundTripsTheEncoder) {
  KvEventBatch b;
  b.ts = 7.25;
  b.events = {Stored({1, 2}, std::nullopt, {10, 11, 12, 13}, kMediumDevice), BlockRemovedEvent{{1}, kMediumHost},
              AllBlocksClearedEvent{}};
  b.data_parallel_rank = 1;
  auto d = DecodeKvEventBatch(EncodeKvEventBatch(b));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_DOUBLE_EQ(d->ts, 7.25);
  ASSERT_EQ(d->events.size(), 3u);
  const auto& s = std::get<BlockStoredEvent>(d->events[0]);
  EXPECT_EQ(s.block_hashes, (std::vector<EventBlockHash>{1, 2}));
  EXPECT_FALSE(s.parent_block_hash.has_value());
  EXPECT_EQ(s.token_ids, (std::vector<int32_t>{10, 11, 12, 13}));
  EXPECT_EQ(std::get<BlockRemovedEvent>(d->events[1]).medium, "CPU");
  EXPECT_EQ(d->data_parallel_rank, 1);
}

TEST(EventDecoder, GarbageIsAnErrorNotACrash) {
  for (std::string bad : {std::string(""), std::string("\x93\x01"), std::string("\x92\xcb"), std::string("abc"),
                          EncodeKvEventBatch({1.5, {AllBlocksClearedEvent{}}, std::nullopt}).substr(0, 5)})
    EXPECT_FALSE(DecodeKvEventBatch(bad).ok()) << testing::PrintToString(bad);
  // An unknown tag.
  std::string payload =
      "\x92\x00\x91\x91\xa3"
      "Foo";
  EXPECT_FALSE(DecodeKvEventBatch(payload).ok());
}

TEST(ReplicaIndex, LongestPrefixFollowsChainsAndMedia) {
  ReplicaIndex idx;
  KvEventBatch b;
  b.events = {Stored({1, 2}, std::nullopt, {10, 11, 12, 13}, kMediumDevice), Stored({3}, 2, {14, 15}, kMediumHost),
              Stored({4}, 1, {20, 21}, kMediumDevice)};  // a branch after block 1
  idx.Apply(b);
  std::vector<int32_t> p = {10, 11, 12, 13, 14, 15, 16};
  ReplicaIndex::Match m = idx.Longest(p);
  EXPECT_EQ(m.tokens, 6);
  EXPECT_EQ(m.device_tokens, 4);  // the third block is only on host
  EXPECT_EQ(idx.Longest(std::vector<int32_t>{10, 11, 20, 21}).tokens, 4);
  EXPECT_EQ(idx.Longest(std::vector<int32_t>{10, 11, 20, 22}).tokens, 2);
  EXPECT_EQ(idx.Longest(std::vector<int32_t>{11, 10}).tokens, 0);
  // Block 2 leaves the device: the chain breaks there.
  KvEventBatch r;
  r.events = {BlockRemovedEvent{{2}, kMediumDevice}};
  idx.Apply(r);
  EXPECT_EQ(idx.Longest(p).tokens, 2);
  EXPECT_EQ(idx.blocks(), 3u);
  KvEventBatch c;
  c.events = {AllBlocksClearedEvent{}};
  idx.Apply(c);
  EXPECT_EQ(idx.blocks(), 0u);
  EXPECT_EQ(idx.Longest(p).tokens, 0);
}

// Events with hashes only (--kv-events-tokens off): the prompt is matched on
// its block hashes, as one chain from the first block.
TEST(ReplicaIndex, HashesOnlyMatchOnTheChainOfHashes) {
  ReplicaIndex idx;
  KvEventBatch b;
  b.events = {Stored({1, 2}, std::nullopt, {}, kMediumDevice), Stored({3}, 2, {}, kMediumHost),
              Stored({4}, 1, {}, kMediumDevice), Stored({7}, 5, {}, kMediumDevice)};
  idx.Apply(b);
  EXPECT_EQ(idx.blocks(), 5u);
  const std::vector<EventBlockHash> p = {1, 2, 3, 9};
  ReplicaIndex::Match m = idx.LongestByHashes(p);
  EXPECT_EQ(m.tokens, 6);
  EXPECT_EQ(m.device_tokens, 4);
  EXPECT_EQ(idx.LongestByHashes(std::vector<EventBlockHash>{1, 4}).tokens, 4);
  EXPECT_EQ(idx.LongestByHashes(std::vector<EventBlockHash>{2, 3}).tokens, 0);  // 2 is not a first block
  EXPECT_EQ(idx.LongestByHashes(std::vector<EventBlockHash>{1, 3}).tokens, 2);  // 3 hangs off 2, not 1
  EXPECT_EQ(idx.LongestByHashes(std::vector<EventBlockHash>{7}).tokens, 0);
  EXPECT_EQ(idx.Longest(std::vector<int32_t>{0, 0, 0, 0}).tokens, 0);  // no tokens to match on
  KvEventBatch r;
  r.events = {BlockRemovedEvent{{2}, kMediumDevice}};
  idx.Apply(r);
  EXPECT_EQ(idx.LongestByHashes(p).tokens, 2);
  // Token ids of the wrong length are malformed: ignored.
  KvEventBatch bad;
  bad.events = {Stored({8}, std::nullopt, {1}, kMediumDevice)};
  idx.Apply(bad);
  EXPECT_EQ(idx.LongestByHashes(std::vector<EventBlockHash>{8}).tokens, 0);
}

// Bounded: a full index records no more blocks, and says how many it dropped.
TEST(ReplicaIndex, HoldsAtMostItsBoundOfBlocks) {
  ReplicaIndex idx(3);
  KvEventBatch b;
  b.events = {Stored({1, 2}, std::nullopt, {10, 11, 12, 13}, kMediumDevice),
              Stored({3, 4}, 2, {14, 15, 16, 17}, kMediumDevice)};
  idx.Apply(b);
  EXPECT_EQ(idx.blocks(), 3u);
  EXPECT_EQ(idx.dropped(), 1u);
  EXPECT_EQ(idx.BlockBytes(), ReplicaIndex::kBlockOverheadBytes + 4 * 2);
  EXPECT_EQ(idx.bound_bytes(), 3 * idx.BlockBytes());
  EXPECT_EQ(idx.Longest(std::vector<int32_t>{10, 11, 12, 13, 14, 15, 16, 17}).tokens, 6);
  // A block already held takes no room: its other medium is recorded.
  KvEventBatch again;
  again.events = {Stored({1}, std::nullopt, {10, 11}, kMediumHost)};
  idx.Apply(again);
  EXPECT_EQ(idx.BlocksPerMedium()["CPU"], 1);
  // Blocks larger than kMaxBlockSize tokens are not recorded at all.
  ReplicaIndex big;
  KvEventBatch huge;
  huge.events = {Stored({1}, std::nullopt, {}, kMediumDevice)};
  std::get<BlockStoredEvent>(huge.events[0]).block_size = ReplicaIndex::kMaxBlockSize + 1;
  big.Apply(huge);
  EXPECT_EQ(big.blocks(), 0u);
}

TEST(RoutePolicy, PrefersCacheThenLoadThenAffinity) {
  RoutePolicyOptions o;
  o.block_size = 16;
  uint64_t turn = 0;
  std::vector<ReplicaView> v(3);
  for (auto& r : v) r.healthy = true;
  v[1].cached_tokens = 256;
  EXPECT_EQ(ChooseReplica(v, o, &turn), 1);
  v[1].inflight = 2;  // busy: 2 * 512 tokens of cost outweighs 256 cached
  EXPECT_NE(ChooseReplica(v, o, &turn), 1);
  v[1].inflight = 0;
  v[1].cached_tokens = 768;
  v[1].sessions = 1;  // a new session: 768 cached tokens outweigh one homed session...
  EXPECT_EQ(ChooseReplica(v, o, &turn), 1);
  v[1].sessions = 2;  // ...but not two (2 * 512 tokens): it caches the prefix elsewhere
  EXPECT_NE(ChooseReplica(v, o, &turn), 1);
  v[1].sessions = 0;
  v[1].cached_tokens = 256;
  v[2].session_home = true;  // affinity holds only within one block of the longest
  EXPECT_EQ(ChooseReplica(v, o, &turn), 1);
  v[2].cached_tokens = 240;
  EXPECT_EQ(ChooseReplica(v, o, &turn), 2);
  v[2].healthy = false;
  EXPECT_EQ(ChooseReplica(v, o, &turn), 1);
  for (auto& r : v) r.healthy = false;
  EXPECT_EQ(ChooseReplica(v, o, &turn), -1);
}

TEST(RoutePolicy, NewSessionsSpreadAndRoundRobinRotates) {
  RoutePolicyOptions o;
  uint64_t turn = 0;
  std::vector<ReplicaView> v(3);
  for (auto& r : v) r.healthy = true;
  v[0].sessions = 2;
  v[1].sessions = 1;
  v[2].sessions = 1;
  EXPECT_EQ(ChooseReplica(v, o, &turn), 1);
  o.mode = RouteMode::kRoundRobin;
  v[1].healthy = false;
  EXPECT_EQ(ChooseReplica(v, o, &turn), 0);
  EXPECT_EQ(ChooseReplica(v, o, &turn), 2);  // 1 is skipped
  EXPECT_EQ(ChooseReplica(v, o, &turn), 0);
}

TEST(ReplicaFeed, WildcardEndpointsResolveToTheReplicaHost) {
  EXPECT_EQ(ResolveEventEndpoint("tcp://*:5557", "http://10.1.2.3:8000"), "tcp://10.1.2.3:5557");
  EXPECT_EQ(ResolveEventEndpoint("tcp://0.0.0.0:5557", "http://host:8000/"), "tcp://host:5557");
  EXPECT_EQ(ResolveEventEndpoint("tcp://127.0.0.1:5557", "http://10.1.2.3:8000"), "tcp://127.0.0.1:5557");
}

TEST(ReplicaFeed, FollowsOnlyTheReplicasOwnEndpoints) {
  EXPECT_TRUE(EndpointOfReplica("tcp://10.1.2.3:5557", "http://10.1.2.3:8000"));
  EXPECT_TRUE(EndpointOfReplica(ResolveEventEndpoint("tcp://*:5557", "http://10.1.2.3:8000"), "http://10.1.2.3:8000"));
  EXPECT_FALSE(EndpointOfReplica("tcp://10.9.9.9:5557", "http://10.1.2.3:8000"));  // another machine's events
  EXPECT_FALSE(EndpointOfReplica("tcp://127.0.0.1:5557", "http://10.1.2.3:8000"));
  EXPECT_FALSE(EndpointOfReplica("tcp://10.1.2.3", "http://10.1.2.3:8000"));
  EXPECT_FALSE(EndpointOfReplica("pgm://10.1.2.3:5557", "http://10.1.2.3:8000"));
  EXPECT_TRUE(EndpointOfReplica("ipc:///tmp/kv.sock", "http://127.0.0.1:8000"));
  EXPECT_FALSE(EndpointOfReplica("ipc:///tmp/kv.sock", "http://10.1.2.3:8000"));
}

TEST(Router, RelaysTheHeadersClientsRelyOn) {
  for (const char* h : {"X-Request-Id", "request-id", "Retry-After", "X-Prosgrow-Synthetic-Acceptance",
                        "x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-limit", "openai-version",
                        "WWW-Authenticate", "Allow"})
    EXPECT_TRUE(RelayedHeader(h)) << h;
  for (const char* h : {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Content-Type", "Server"})
    EXPECT_FALSE(RelayedHeader(h)) << h;
}

}  // namespace
}  // namespace pg
