#include "route/affinity_table.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

TEST(AffinityTable, KeysAreScopedByCredentialsAndFixedInSize) {
  const AffinityKey a = MakeAffinityKey("Bearer k1\n", "session");
  EXPECT_EQ(a, MakeAffinityKey("Bearer k1\n", "session"));
  EXPECT_FALSE(a == MakeAffinityKey("Bearer k2\n", "session"));
  EXPECT_FALSE(MakeAffinityKey("ab", "c") == MakeAffinityKey("a", "bc"));
  AffinityTable t(4, 2);
  t.Record(MakeAffinityKey("", std::string(2 << 20, 'n')), 1);  // a 2 MiB name costs one entry
  EXPECT_EQ(t.entries(), 1u);
  EXPECT_EQ(t.bytes(), AffinityTable::kEntryBytes);
  EXPECT_EQ(t.bound_bytes(), 4 * AffinityTable::kEntryBytes);
}

TEST(AffinityTable, ForgetsTheLeastRecentlyUsedWhenFull) {
  AffinityTable t(2, 2);
  const AffinityKey a = MakeAffinityKey("", "a"), b = MakeAffinityKey("", "b"), c = MakeAffinityKey("", "c");
  t.Record(a, 0);
  t.Record(b, 1);
  t.Record(a, 1);  // a moves to replica 1 and is the most recent
  EXPECT_EQ(t.on_replica(0), 0);
  EXPECT_EQ(t.on_replica(1), 2);
  t.Record(c, 0);  // b goes
  EXPECT_EQ(t.entries(), 2u);
  EXPECT_EQ(t.Find(b), -1);
  EXPECT_EQ(t.Find(a), 1);
  EXPECT_EQ(t.Find(c), 0);
  t.Forget(a);
  EXPECT_EQ(t.Find(a), -1);
  EXPECT_EQ(t.on_replica(1), 0);
  t.Record(c, 7);  // no such replica: ignored
  EXPECT_EQ(t.Find(c), 0);
}

}  // namespace
}  // namespace pg
