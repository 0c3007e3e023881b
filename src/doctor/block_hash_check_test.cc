#include "doctor/block_hash_check.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

using V = CheckResult::Verdict;

TEST(BlockHashCheck, UnkeyedHashesThatLeaveTheServerWarnInPlainWords) {
  const CheckResult r = CheckBlockHashes({.keyed = false, .kv_events = true, .kv_remote = true, .disk = true});
  EXPECT_EQ(r.name, "block hashes");
  EXPECT_EQ(r.verdict, V::kWarn);
  EXPECT_NE(r.detail.find("not keyed"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("the KV events, the Redis key names and the disk tier's file names"), std::string::npos)
      << r.detail;
  EXPECT_NE(r.detail.find("guessed prompt"), std::string::npos) << r.detail;
  EXPECT_NE(r.fix.find("--kv-hash-secret-file"), std::string::npos) << r.fix;
  EXPECT_NE(r.fix.find("PROSGROW_KV_HASH_SECRET"), std::string::npos) << r.fix;
  EXPECT_EQ(CheckBlockHashes({.disk = true}).verdict, V::kWarn);
}

TEST(BlockHashCheck, UnkeyedHashesThatStayInsideAreOkAndSaySo) {
  const CheckResult r = CheckBlockHashes({});
  EXPECT_EQ(r.verdict, V::kOk);
  EXPECT_NE(r.detail.find("not keyed"), std::string::npos) << r.detail;
}

TEST(BlockHashCheck, KeyedHashesAreOk) {
  const CheckResult r = CheckBlockHashes({.keyed = true, .kv_events = true});
  EXPECT_EQ(r.verdict, V::kOk);
  EXPECT_NE(r.detail.find("keyed with the fleet secret"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("the KV events say nothing"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace pg
