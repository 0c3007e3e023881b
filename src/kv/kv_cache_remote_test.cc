// Two KvCacheManagers ("replicas") sharing one real redis-server: blocks one
// publishes are written behind; the other, with nothing cached, looks them up
// on a miss, imports them and reuses them (reported as tier "remote"), with
// the bytes the first one wrote. Skipped without redis-server.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"
#include "kv/redis_test_server.h"

namespace pg {
namespace {

using kvtest::FakeEngine;

KvCacheConfig RemoteConfig(const std::string& url) {
  KvCacheConfig c = KvCacheConfig::Baseline(kvtest::SmallLayout(), kvtest::kModel, 32 * kvtest::kBlock);
  c.remote.url = url;
  c.remote.timeout_s = 2.0;  // generous: this test checks reuse, not latency
  return c;
}

// Waits (bounded) until seq's lookup ended; false if it never did.
bool AwaitLookup(KvCacheManager& kv, SeqId seq) {
  for (int i = 0; i < 1000; ++i) {
    if (!kv.RemoteLookupPending(seq)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(KvCacheRemoteTest, SecondReplicaReusesBlocksFromRedis) {
  testing::RedisTestServer redis;
  if (std::string why = redis.Start(); !why.empty()) GTEST_SKIP() << why;
  auto a = kvtest::Make(RemoteConfig(redis.url()));
  auto b = kvtest::Make(RemoteConfig(redis.url()));
  ASSERT_TRUE(a && b);
  FakeEngine ea(*a, kvtest::kModel), eb(*b, kvtest::kModel);

  std::vector<int32_t> conv = kvtest::Message(1, 0, 22);  // 5 full blocks of 4 (+2)
  a->StartRemoteLookup(1, conv, {});
  ASSERT_TRUE(AwaitLookup(*a, 1));
  EXPECT_EQ(ea.Turn(1, &conv, 6).total(), 0);  // nothing anywhere yet
  ASSERT_TRUE(kvtest::DrainRemoteWrites(*a, 10));
  EXPECT_EQ(a->counters().remote.writes, 7);  // 22 + 6 = 28 tokens: blocks 0..6 full

  // Replica B: next turn of the same conversation, nothing cached locally.
  const std::vector<int32_t> next = [&] {
    std::vector<int32_t> t = conv;
    for (int32_t x : kvtest::Message(1, 1, 9)) t.push_back(x);
    return t;
  }();
  std::vector<int32_t> turn2 = next;
  b->StartRemoteLookup(7, turn2, {});
  ASSERT_TRUE(AwaitLookup(*b, 7));
  const TierTokens r = eb.Turn(7, &turn2, 2);
  EXPECT_EQ(r[kRemoteTier], 7 * 4);  // blocks 0..6 from Redis
  EXPECT_EQ(r[kDeviceTier] + r[kHostTier] + r[kDiskTier], 0);
  EXPECT_EQ(eb.bad(), 0);  // the reused bytes are A's bytes
  EXPECT_GE(eb.checked(), 7);
  const RemoteCounters k = b->counters().remote;
  EXPECT_EQ(k.hit_blocks, 7);
  EXPECT_EQ(k.imported_blocks, 7);
  EXPECT_TRUE(b->CheckIntegrity().ok()) << b->CheckIntegrity().ToString();

  // A third turn on B is served locally: device tier, no remote lookup needed.
  std::vector<int32_t> turn3 = turn2;
  b->StartRemoteLookup(8, turn3, {});
  ASSERT_TRUE(AwaitLookup(*b, 8));
  const TierTokens r3 = eb.Turn(8, &turn3, 1);
  EXPECT_EQ(r3[kRemoteTier], 0);
  EXPECT_GE(r3[kDeviceTier], 7 * 4);
}

// Two replicas with small device tiers (imports evict) take turns of six
// conversations at random: every reused block holds its producer's bytes,
// and both caches stay consistent after every turn.
TEST(KvCacheRemoteTest, RandomTurnsAcrossTwoReplicasStayCorrect) {
  testing::RedisTestServer redis;
  if (std::string why = redis.Start(); !why.empty()) GTEST_SKIP() << why;
  std::unique_ptr<KvCacheManager> kv[2];
  for (auto& k : kv) {
    KvCacheConfig c = kvtest::Tiered(12, 16, "", 0);
    c.remote.url = redis.url();
    c.remote.timeout_s = 2.0;
    k = kvtest::Make(c);
    ASSERT_TRUE(k);
  }
  FakeEngine eng[2] = {FakeEngine(*kv[0], kvtest::kModel), FakeEngine(*kv[1], kvtest::kModel)};
  std::vector<std::vector<int32_t>> convs;
  for (int i = 0; i < 6; ++i) convs.push_back(kvtest::Message(10 + i, 0, 9 + 3 * i));
  uint32_t rng = 12345;
  auto next = [&] { return rng = rng * 1103515245u + 12345u; };
  int64_t remote_tokens = 0;
  for (int step = 0; step < 120; ++step) {
    const int r = int(next() >> 16) % 2, c = int(next() >> 16) % 6;
    std::vector<int32_t>& conv = convs[size_t(c)];
    for (int32_t t : kvtest::Message(c, step, 3)) conv.push_back(t);
    if (conv.size() > 40) conv.resize(9);  // keep within the device tier
    const SeqId id = 100 + step;
    kv[r]->StartRemoteLookup(id, conv, {});
    ASSERT_TRUE(AwaitLookup(*kv[r], id));
    remote_tokens += eng[r].Turn(id, &conv, 2)[kRemoteTier];
    kv[r]->Tick();
    ASSERT_TRUE(kv[r]->CheckIntegrity().ok()) << "step " << step << ": " << kv[r]->CheckIntegrity().ToString();
    if (step % 10 == 0) kvtest::DrainRemoteWrites(*kv[r], 10);
  }
  EXPECT_EQ(eng[0].bad() + eng[1].bad(), 0);
  EXPECT_GT(remote_tokens, 0);  // the replicas did share blocks
  EXPECT_GT(kv[0]->counters().remote.imported_blocks + kv[1]->counters().remote.imported_blocks, 0);
}

TEST(KvCacheRemoteTest, UnreachableRedisIsAMissThatEndsAtTheDeadline) {
  KvCacheConfig c = RemoteConfig("redis://127.0.0.1:1");
  c.remote.timeout_s = 0.05;
  auto kv = kvtest::Make(c);
  ASSERT_TRUE(kv);
  FakeEngine e(*kv, kvtest::kModel);
  std::vector<int32_t> conv = kvtest::Message(2, 0, 21);
  kv->StartRemoteLookup(1, conv, {});
  ASSERT_TRUE(AwaitLookup(*kv, 1));
  EXPECT_EQ(e.Turn(1, &conv, 3).total(), 0);
  EXPECT_EQ(e.bad(), 0);
  // The refused connection is counted when the reader thread gets to it,
  // which under load may be after the request's deadline ended its wait.
  bool counted = false;
  for (int i = 0; i < 2000 && !counted; ++i) {
    counted = kv->counters().remote.errors >= 1;
    if (!counted) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(counted) << "no remote error counted";
  EXPECT_TRUE(kv->CheckIntegrity().ok());
}

TEST(KvCacheRemoteTest, NoLookupWhenTheLocalCacheHoldsThePrompt) {
  testing::RedisTestServer redis;
  if (std::string why = redis.Start(); !why.empty()) GTEST_SKIP() << why;
  auto kv = kvtest::Make(RemoteConfig(redis.url()));
  ASSERT_TRUE(kv);
  FakeEngine e(*kv, kvtest::kModel);
  std::vector<int32_t> conv = kvtest::Message(3, 0, 17);
  std::vector<int32_t> again = conv;
  e.Turn(1, &conv, 0);
  kv->StartRemoteLookup(2, again, {});
  EXPECT_FALSE(kv->RemoteLookupPending(2));
  EXPECT_EQ(kv->counters().remote.lookups, 0);
  EXPECT_EQ(kv->remote_lookups_pending(), 0);
}

}  // namespace
}  // namespace pg
