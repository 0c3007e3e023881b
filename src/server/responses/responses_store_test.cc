#include "server/responses/responses_store.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(ResponseStore, BoundedLeastRecentlyUsed) {
  ResponseStore store(2);
  store.Put("", "a", {{"n", 1}});
  store.Put("", "b", {{"n", 2}});
  ASSERT_TRUE(store.Get("", "a"));  // a is now the most recent
  store.Put("", "c", {{"n", 3}});   // drops b
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.Get("", "b"));
  EXPECT_EQ((*store.Get("", "a"))["n"], 1);
  EXPECT_EQ((*store.Get("", "c"))["n"], 3);
  EXPECT_FALSE(store.Get("tenant-2", "a"));  // ids are per tenant
  ResponseStore none(0);
  none.Put("", "a", {});
  EXPECT_FALSE(none.Get("", "a"));
}

}  // namespace
}  // namespace pg
