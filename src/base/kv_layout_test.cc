#include "base/kv_layout.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(KvLayoutTest, OffsetsFollowTheDocumentedLayout) {
  KvLayout l{3, 2, 8, 4, KvDtype::kF16};
  ASSERT_TRUE(l.Validate().ok());
  EXPECT_EQ(l.row_bytes(), 2u * 8 * 2);
  EXPECT_EQ(l.block_bytes(), 3u * 2 * 4 * 32);
  EXPECT_EQ(l.offset(0, 0), 0u);
  EXPECT_EQ(l.offset(0, 1), 4u * 32);
  EXPECT_EQ(l.offset(1, 0), 2u * 4 * 32);
  EXPECT_EQ(l.offset(2, 1) + 4 * 32, l.block_bytes());
}

TEST(KvLayoutTest, RejectsBadGeometry) {
  EXPECT_FALSE((KvLayout{0, 2, 8, 4, KvDtype::kF16}).Validate().ok());
  EXPECT_FALSE((KvLayout{2, 2, 8, 0, KvDtype::kF16}).Validate().ok());
  EXPECT_FALSE((KvLayout{100000, 100, 1000, 16, KvDtype::kBF16}).Validate().ok());
}

TEST(KvLayoutTest, KvDimAndNames) {
  KvLayout l{2, 4, 64, 16, KvDtype::kBF16};
  EXPECT_EQ(l.kv_dim(), 256);
  EXPECT_EQ(l.row_bytes(), size_t(l.kv_dim()) * 2);
  EXPECT_STREQ(KvDtypeName(l.dtype), "bf16");
  EXPECT_NE(l.ToString().find("dtype=bf16"), std::string::npos);
}

}  // namespace
}  // namespace pg
