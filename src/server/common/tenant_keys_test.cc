#include "server/common/tenant_keys.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "server/common/tenant.h"

namespace pg {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/pg_tenant_keys_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// RFC 9110 11.1: the auth scheme is case-insensitive.
TEST(TenantKeys, BearerSchemeInAnyCase) {
  EXPECT_EQ(BearerToken("Bearer sk-1"), "sk-1");
  EXPECT_EQ(BearerToken("bearer sk-1"), "sk-1");
  EXPECT_EQ(BearerToken("BEARER sk-1"), "sk-1");
  EXPECT_EQ(BearerToken("bEaReR   sk-1"), "sk-1");
  EXPECT_EQ(BearerToken("Basic c2stMQ=="), "");
  EXPECT_EQ(BearerToken("Bearersk-1"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken(""), "");
}

TEST(TenantKeys, ParsesPairsCommentsAndBlankLines) {
  auto e = TenantKeys::Parse("# tenants\n\nalpha  key-alpha-1   # the first\n  beta\tkey-beta-22\n", "f");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].tenant, "alpha");
  EXPECT_EQ((*e)[0].key, "key-alpha-1");
  EXPECT_EQ((*e)[1].tenant, "beta");
  EXPECT_EQ((*e)[1].key, "key-beta-22");
}

TEST(TenantKeys, RefusesBadLinesNamingTheLine) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"alpha\n", "line 1: expected 'TENANT KEY'"},
      {"# c\nalpha key-alpha-1 extra\n", "line 2: expected 'TENANT KEY'"},
      {"al/pha key-alpha-1\n", "line 1: tenant id"},
      {"alpha short\n", "line 1: key must be"},
      {"alpha key-alpha-1\nbeta key-alpha-1\n", "line 2: key given twice"},
  };
  for (const Case& c : cases) {
    auto e = TenantKeys::Parse(c.text, "f");
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_NE(e.status().message().find(c.says), std::string::npos) << e.status().message();
  }
}

TEST(TenantKeys, FindsEachTenantAndNothingElse) {
  const std::string path = WriteFile("find", "alpha key-alpha-1\nbeta key-beta-22\n");
  auto keys = TenantKeys::Create({"single-key-0", path, {}});
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_TRUE((*keys)->Enabled());
  EXPECT_EQ((*keys)->size(), 3u);
  EXPECT_EQ((*keys)->Find("key-alpha-1")->id, "alpha");
  EXPECT_EQ((*keys)->Find("key-beta-22")->id, "beta");
  EXPECT_EQ((*keys)->Find("single-key-0")->id, "default");
  EXPECT_EQ((*keys)->Find("key-beta-22")->cache_group, "beta");
  EXPECT_FALSE((*keys)->Find("key-beta-2").has_value());
  EXPECT_FALSE((*keys)->Find("").has_value());
  std::remove(path.c_str());
}

TEST(TenantKeys, NoKeysMeansDisabled) {
  auto keys = TenantKeys::Create({});
  ASSERT_TRUE(keys.ok());
  EXPECT_FALSE((*keys)->Enabled());
  EXPECT_FALSE((*keys)->Find("").has_value());
}

TEST(TenantKeys, ShareGroupsJoinNamedTenantsOnly) {
  const std::string path = WriteFile("share", "a key-aaaaaaaa\nb key-bbbbbbbb\nc key-cccccccc\n");
  auto keys = TenantKeys::Create({"", path, {"b,a"}});
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ((*keys)->Find("key-aaaaaaaa")->cache_group, "a+b");
  EXPECT_EQ((*keys)->Find("key-bbbbbbbb")->cache_group, "a+b");
  EXPECT_EQ((*keys)->Find("key-cccccccc")->cache_group, "c");
  EXPECT_FALSE(TenantKeys::Create({"", path, {"a"}}).ok());
  EXPECT_FALSE(TenantKeys::Create({"", path, {"a,b", "b,c"}}).ok());
  std::remove(path.c_str());
}

TEST(TenantKeys, ReloadTakesNewKeysAndKeepsOldOnesOnError) {
  const std::string path = WriteFile("reload", "alpha key-alpha-1\n");
  auto keys = TenantKeys::Create({"", path, {}});
  ASSERT_TRUE(keys.ok());
  WriteFile("reload", "alpha key-alpha-2\ngamma key-gamma-3\n");
  ASSERT_TRUE((*keys)->Reload().ok());
  EXPECT_FALSE((*keys)->Find("key-alpha-1").has_value());
  EXPECT_EQ((*keys)->Find("key-gamma-3")->id, "gamma");
  WriteFile("reload", "alpha\n");
  Status st = (*keys)->Reload();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ((*keys)->Find("key-gamma-3")->id, "gamma");  // the old table stays
  std::remove(path.c_str());
}

TEST(Tenant, SaltsAndSessionsAreScopedByTenant) {
  const Tenant anon;
  const Tenant a{"a", "a"}, b{"b", "b"}, shared_a{"a", "a+b"}, shared_b{"b", "a+b"};
  EXPECT_EQ(TenantCacheSalt(anon, ""), "");  // a keyless server keeps its one cache
  EXPECT_NE(TenantCacheSalt(anon, "x"), "");
  EXPECT_NE(TenantCacheSalt(a, ""), TenantCacheSalt(b, ""));
  EXPECT_NE(TenantCacheSalt(a, ""), TenantCacheSalt(a, "x"));
  EXPECT_NE(TenantCacheSalt(a, "x"), TenantCacheSalt(a, "y"));
  EXPECT_EQ(TenantCacheSalt(shared_a, "x"), TenantCacheSalt(shared_b, "x"));
  EXPECT_EQ(TenantSessionId(anon, "s"), "s");
  EXPECT_EQ(TenantSessionId(a, "s"), "a/s");
  EXPECT_NE(TenantSessionId(a, "s"), TenantSessionId(b, "s"));
  EXPECT_EQ(TenantSessionId(a, ""), "");
  {
    TenantScope scope(&a);
    EXPECT_EQ(Tenant::Current().id, "a");
  }
  EXPECT_EQ(Tenant::Current().id, "");
}

}  // namespace
}  // namespace pg
