// RemoteTier against a real redis-server this test starts (skipped when
// redis-server is not installed; scripts/setup.sh installs it).
#include "kv/media/remote_tier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/clock.h"
#include "kv/kv_test_util.h"
#include "kv/redis_test_server.h"

namespace pg {
namespace {

using testing::RedisTestServer;

constexpr const char* kModelId = "remote-model";

// A chain of n blocks from the root of kModelId.
std::vector<RemoteWant> Chain(int n, int32_t seed = 100) {
  std::vector<RemoteWant> out;
  BlockHash parent = RootHash(kModelId, "");
  for (int i = 0; i < n; ++i) {
    RemoteWant w;
    w.parent = parent;
    w.depth = i;
    for (int t = 0; t < 4; ++t) w.tokens.push_back(seed + 4 * i + t);
    w.hash = ChainHash(parent, w.tokens);
    parent = w.hash;
    out.push_back(w);
  }
  return out;
}

std::vector<uint8_t> Bytes(const RemoteWant& w) {
  std::vector<uint8_t> d(kvtest::SmallLayout().block_bytes());
  kvtest::FillPattern(w.hash, d.data(), d.size());
  return d;
}

struct Fixture {
  RedisTestServer server;
  std::unique_ptr<RemoteTier> tier;
  std::string skip;

  explicit Fixture(RemoteTierConfig c = {}) {
    skip = server.Start();
    if (!skip.empty()) return;
    c.url = server.url();
    if (c.retry_after_s == RemoteTierConfig{}.retry_after_s) c.retry_after_s = 0.05;
    auto t = RemoteTier::Create(c, kvtest::SmallLayout(), kModelId);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) tier = std::move(*t);
  }
  void Write(const RemoteWant& w) {
    const std::vector<uint8_t> d = Bytes(w);
    tier->Write(RemoteBlockInfo{w.hash, w.parent, w.depth, w.tokens}, d.data());
  }
  // Writes every block of `chain`; whether the writes then drained.
  bool WriteAll(const std::vector<RemoteWant>& chain) {
    for (const auto& w : chain) Write(w);
    return tier->DrainWrites(10);
  }
  // Runs one lookup and waits for its result (the wait bound is generous, not a claim).
  RemoteFound Lookup(const std::vector<RemoteWant>& want, double timeout_s = 2.0) {
    static uint64_t ticket = 0;
    const uint64_t t = ++ticket;
    tier->Lookup(t, want, NowSeconds() + timeout_s);
    for (int i = 0; i < 3000; ++i) {
      for (RemoteFound& f : tier->TakeFound())
        if (f.ticket == t) return std::move(f);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "lookup never finished";
    return {};
  }
};

#define SKIP_WITHOUT_REDIS(f) \
  if (!(f).skip.empty()) GTEST_SKIP() << (f).skip

TEST(RemoteTierTest, RoundTripWithTtl) {
  RemoteTierConfig c;
  c.ttl_s = 600;
  Fixture f(c);
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(3);
  ASSERT_TRUE(f.WriteAll(chain));
  EXPECT_EQ(f.tier->counters().writes, 3);
  RemoteFound found = f.Lookup(chain);
  ASSERT_EQ(found.blocks.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(found.blocks[i].info.hash, chain[i].hash);
    EXPECT_EQ(found.blocks[i].data, Bytes(chain[i]));
  }
  const std::string key = f.tier->codec().Key(chain[0].hash);
  const int64_t pttl = std::stoll(f.server.Command({"PTTL", key}));
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 600000);
  const RemoteCounters k = f.tier->counters();
  EXPECT_EQ(k.hit_blocks, 3);
  EXPECT_EQ(k.write_bytes, int64_t(3 * f.tier->codec().value_bytes()));
  // Written once: the same block again is not queued.
  f.Write(chain[0]);
  ASSERT_TRUE(f.tier->DrainWrites(10));
  EXPECT_EQ(f.tier->counters().writes, 3);
}

TEST(RemoteTierTest, NoTtlMeansNoExpiry) {
  RemoteTierConfig c;
  c.ttl_s = 0;
  Fixture f(c);
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(1);
  f.Write(chain[0]);
  ASSERT_TRUE(f.tier->DrainWrites(10));
  EXPECT_EQ(f.server.Command({"PTTL", f.tier->codec().Key(chain[0].hash)}), "-1");
}

TEST(RemoteTierTest, ChainStopsAtFirstAbsentBlock) {
  Fixture f;
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(4);
  f.Write(chain[0]);
  f.Write(chain[1]);
  f.Write(chain[3]);
  ASSERT_TRUE(f.tier->DrainWrites(10));
  RemoteFound found = f.Lookup(chain);
  EXPECT_EQ(found.blocks.size(), 2u);
  EXPECT_EQ(f.tier->counters().miss_blocks, 2);
}

TEST(RemoteTierTest, CorruptValueIsAMissAndIsDeleted) {
  Fixture f;
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(2);
  ASSERT_TRUE(f.WriteAll(chain));
  const std::string key = f.tier->codec().Key(chain[1].hash);
  // Alter one payload byte in place.
  const size_t off = RemoteCodec::kHeaderBytes + 16 + 7;
  std::string v = f.server.Command({"GET", key});
  ASSERT_EQ(v.size(), f.tier->codec().value_bytes());
  v[off] = char(v[off] ^ 1);
  ASSERT_EQ(f.server.Command({"SETRANGE", key, std::to_string(off), std::string(1, v[off])}), std::to_string(v.size()));
  RemoteFound found = f.Lookup(chain);
  EXPECT_EQ(found.blocks.size(), 1u);  // block 0 still good; block 1 rejected
  EXPECT_EQ(f.tier->counters().corrupt, 1);
  EXPECT_EQ(f.server.Command({"EXISTS", key}), "0");
}

TEST(RemoteTierTest, AnotherModelsValueUnderOurKeyIsRejected) {
  Fixture f;
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(1);
  // The same hash and tokens written by a tier of another model identity...
  RemoteCodec other(kvtest::SmallLayout(), "other-model");
  const std::vector<uint8_t> d = Bytes(chain[0]);
  const std::string v = other.Encode(RemoteBlockInfo{chain[0].hash, chain[0].parent, 0, chain[0].tokens}, d.data());
  // ...copied under this model's key.
  ASSERT_EQ(f.server.Command({"SET", f.tier->codec().Key(chain[0].hash), v}), "OK");
  EXPECT_TRUE(f.Lookup(chain).blocks.empty());
  EXPECT_EQ(f.tier->counters().corrupt, 1);
}

TEST(RemoteTierTest, SizeBudgetRefusesWritesBeyondIt) {
  RemoteTierConfig c;
  c.max_bytes = RemoteCodec(kvtest::SmallLayout(), kModelId).value_bytes() * 5 / 2;  // room for two
  Fixture f(c);
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(3);
  ASSERT_TRUE(f.WriteAll(chain));
  const RemoteCounters k = f.tier->counters();
  EXPECT_EQ(k.writes, 2);
  EXPECT_EQ(k.budget_refused, 1);
  EXPECT_LE(uint64_t(k.write_bytes), c.max_bytes);
  EXPECT_EQ(f.server.Keys("pgkv:*").size(), 2u);
}

TEST(RemoteTierTest, PausedServerEndsTheLookupAtItsDeadline) {
  RemoteTierConfig c;
  c.timeout_s = 0.05;
  Fixture f(c);
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(2);
  ASSERT_TRUE(f.WriteAll(chain));
  f.server.Pause();
  RemoteFound found = f.Lookup(chain, c.timeout_s);
  EXPECT_TRUE(found.blocks.empty());
  EXPECT_GE(f.tier->counters().errors, 1);
  f.server.Resume();
  // After the back-off, lookups reach it again (a fresh connection).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(f.Lookup(chain).blocks.size(), 2u);
}

TEST(RemoteTierTest, StoppedServerIsAMissAndWritesDrop) {
  Fixture f;
  SKIP_WITHOUT_REDIS(f);
  const auto chain = Chain(2);
  f.server.Kill();
  EXPECT_TRUE(f.Lookup(chain, 0.2).blocks.empty());
  EXPECT_GE(f.tier->counters().errors, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the back-off
  ASSERT_TRUE(f.WriteAll(chain));
  const RemoteCounters k = f.tier->counters();
  EXPECT_EQ(k.writes, 0);
  EXPECT_EQ(k.dropped_writes, 2);
}

TEST(RemoteTierTest, FullWriteQueueDropsInsteadOfWaiting) {
  RemoteTierConfig c;
  c.write_queue_blocks = 1;
  Fixture f(c);
  SKIP_WITHOUT_REDIS(f);
  f.server.Pause();  // the writer blocks on its first batch; the queue fills behind it
  const auto chain = Chain(8);
  for (const auto& w : chain) f.Write(w);
  EXPECT_GE(f.tier->counters().dropped_writes, 6);
  f.server.Resume();
  ASSERT_TRUE(f.tier->DrainWrites(10));
}

TEST(RemoteTierTest, BadConfigIsRefused) {
  RemoteTierConfig c;
  c.url = "http://x";
  EXPECT_FALSE(RemoteTier::Create(c, kvtest::SmallLayout(), kModelId).ok());
  c.url = "redis://127.0.0.1:6379";
  c.ttl_s = -1;
  EXPECT_FALSE(RemoteTier::Create(c, kvtest::SmallLayout(), kModelId).ok());
  c.ttl_s = 1;
  c.timeout_s = 0;
  EXPECT_FALSE(RemoteTier::Create(c, kvtest::SmallLayout(), kModelId).ok());
}

TEST(RedisKeySlotTest, FollowsTheClusterSpec) {
  // Redis Cluster's documented example slots.
  EXPECT_EQ(RedisKeySlot("123456789"), 0x31C3 & 16383);
  EXPECT_EQ(RedisKeySlot("{user1000}.following"), RedisKeySlot("user1000"));
}

}  // namespace
}  // namespace pg
