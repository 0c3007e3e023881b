// RedisClient against real redis-server processes: plain pipelines, and a
// two-node Redis Cluster whose -MOVED and -ASK redirects the client follows.
// Skipped when redis-server is not installed.
#include "kv/media/redis_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/clock.h"
#include "kv/redis_test_server.h"

namespace pg {
namespace {

using testing::RedisTestServer;

RedisUrl Local(int port) {
  RedisUrl e;
  e.host = "127.0.0.1";
  e.port = port;
  return e;
}

TEST(RedisClientTest, PipelineKeepsOrderAndBinaryValues) {
  RedisTestServer r;
  if (std::string why = r.Start(); !why.empty()) GTEST_SKIP() << why;
  RedisClient c(Local(r.port()));
  const std::string binary("a\0b\r\n", 5);
  auto replies = c.Run({{"SET", "k1", binary}, {"GET", "k1"}, {"GET", "absent"}, {"EXISTS", "k1"}}, NowSeconds() + 5);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  ASSERT_EQ(replies->size(), 4u);
  EXPECT_EQ((*replies)[0].type, RedisReply::Type::kStatus);
  EXPECT_EQ((*replies)[1].str, binary);
  EXPECT_EQ((*replies)[2].type, RedisReply::Type::kNil);
  EXPECT_EQ((*replies)[3].integer, 1);
}

TEST(RedisClientTest, SelectsTheDatabaseOfTheUrl) {
  RedisTestServer r;
  if (std::string why = r.Start(); !why.empty()) GTEST_SKIP() << why;
  auto ep = ParseRedisUrl(r.url() + "/2");
  ASSERT_TRUE(ep.ok());
  RedisClient c(*ep);
  ASSERT_TRUE(c.RunOne({"SET", "in-db-2", "x"}, NowSeconds() + 5).ok());
  EXPECT_EQ(r.Command({"EXISTS", "in-db-2"}), "0");  // db 0
  EXPECT_EQ(r.Command({"DBSIZE"}), "0");
}

TEST(RedisClientTest, UnreachableIsUnavailable) {
  RedisClient c(Local(1));
  auto r = c.RunOne({"GET", "x"}, NowSeconds() + 1);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

// Two cluster nodes: a owns slots 0..8191, b 8192..16383.
struct TwoNodeCluster {
  RedisTestServer a, b;
  std::string skip;
  TwoNodeCluster() {
    const std::vector<std::string> cluster = {"--cluster-enabled", "yes", "--cluster-node-timeout", "2000"};
    skip = a.Start(cluster);
    if (skip.empty()) skip = b.Start(cluster);
    if (!skip.empty()) return;
    a.Command({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"});
    b.Command({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"});
    a.Command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(b.port())});
    for (int i = 0; i < 1000; ++i) {  // gossip settles in about a second
      if (a.Command({"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos &&
          b.Command({"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    skip = "the two-node cluster did not reach cluster_state:ok";
  }
};

// A key whose slot is in [lo, hi].
std::string KeyInSlots(int lo, int hi, int n) {
  for (int i = 0;; ++i) {
    std::string k = "pgkv:test:" + std::to_string(n) + ":" + std::to_string(i);
    const int s = RedisKeySlot(k);
    if (s >= lo && s <= hi) return k;
  }
}

TEST(RedisClientTest, FollowsClusterMovedRedirects) {
  TwoNodeCluster c;
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  RedisClient client(Local(c.a.port()));  // seeded with node a only
  std::vector<RedisClient::Command> sets, gets;
  for (int i = 0; i < 8; ++i) {
    const std::string k = i % 2 ? KeyInSlots(8192, 16383, i) : KeyInSlots(0, 8191, i);
    sets.push_back({"SET", k, "v" + std::to_string(i)});
    gets.push_back({"GET", k});
  }
  auto set = client.Run(sets, NowSeconds() + 5);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  for (const RedisReply& r : *set) EXPECT_TRUE(r.ok()) << r.str;
  EXPECT_GE(client.redirects(), 1);
  auto got = client.Run(gets, NowSeconds() + 5);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (int i = 0; i < 8; ++i) EXPECT_EQ((*got)[size_t(i)].str, "v" + std::to_string(i));
  // The keys live on the node that owns their slot.
  EXPECT_EQ(c.b.Command({"EXISTS", gets[1][1]}), "1");
  EXPECT_EQ(c.a.Command({"EXISTS", gets[0][1]}), "1");
}

TEST(RedisClientTest, FollowsClusterAskRedirects) {
  TwoNodeCluster c;
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  // Slot s of a is being migrated to b: a answers -ASK for keys it does not hold.
  const std::string key = KeyInSlots(0, 8191, 99);
  const std::string slot = std::to_string(RedisKeySlot(key));
  const std::string a_id = c.a.Command({"CLUSTER", "MYID"}), b_id = c.b.Command({"CLUSTER", "MYID"});
  ASSERT_EQ(c.b.Command({"CLUSTER", "SETSLOT", slot, "IMPORTING", a_id}), "OK");
  ASSERT_EQ(c.a.Command({"CLUSTER", "SETSLOT", slot, "MIGRATING", b_id}), "OK");
  RedisClient client(Local(c.a.port()));
  auto r = client.RunOne({"SET", key, "asked"}, NowSeconds() + 5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->str;
  EXPECT_EQ(client.redirects(), 1);
  EXPECT_EQ(c.a.Command({"EXISTS", key}).rfind("(error) ASK ", 0), 0u);  // a does not hold it
  EXPECT_EQ(c.b.Command({"CLUSTER", "COUNTKEYSINSLOT", slot}), "1");     // stored on the importing node
}

}  // namespace
}  // namespace pg
