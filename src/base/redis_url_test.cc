#include "base/redis_url.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(RedisUrl, Parses) {
  auto u = ParseRedisUrl("redis://u:p@cache.local:6380/3");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "cache.local");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 3);
  EXPECT_EQ(u->user, "u");
  EXPECT_EQ(u->password, "p");
  auto d = ParseRedisUrl("redis://:secret@127.0.0.1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 6379);
  EXPECT_EQ(d->db, 0);
  EXPECT_EQ(d->user, "");
  EXPECT_EQ(d->password, "secret");
}

TEST(RedisUrl, RefusesMalformedUrlsNamingTheFlag) {
  for (const char* bad : {"http://x:1", "redis://", "redis://:1", "redis://h:0", "redis://h:99999", "redis://h:x",
                          "redis://h/x", "redis://h:1/-1", "redis://@h"}) {
    auto r = ParseRedisUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--kv-remote"), std::string::npos) << bad;
  }
}

// An ACL user whose password comes from --kv-remote-password-file.
TEST(RedisUrl, UserWithoutPassword) {
  auto u = ParseRedisUrl("redis://alice@h:7000");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->user, "alice");
  EXPECT_EQ(u->password, "");
  EXPECT_EQ(u->port, 7000);
}

TEST(RedisUrl, MessagesNeverShowThePassword) {
  EXPECT_EQ(RedactRedisUrl("redis://u:hunter2@h:1/2"), "redis://u:***@h:1/2");
  EXPECT_EQ(RedactRedisUrl("redis://:hunter2@h"), "redis://:***@h");
  EXPECT_EQ(RedactRedisUrl("redis://alice@h"), "redis://alice@h");
  EXPECT_EQ(RedactRedisUrl("redis://h:1"), "redis://h:1");
  for (const char* bad :
       {"redis://u:hunter2@h:0", "redis://u:hunter2@h/x", "redis://:hunter2@", "rediss://u:hunter2@h"}) {
    auto r = ParseRedisUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace pg
