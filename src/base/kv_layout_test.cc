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

// MLA: one latent row per token and layer, then the indexer keys of the
// indexer layers, all in the block (GLM-5.2 at full size: 576-wide latent
// rows in 78 layers, 128-dim indexer keys in 21 of them).
TEST(KvLayoutTest, MlaBlocksHoldOneLatentRowPerLayerAndTheIndexerKeys) {
  KvLayout l{3, 1, 72, 4, KvDtype::kF16, AttentionKind::kMla, 2, 64};
  ASSERT_TRUE(l.Validate().ok());
  EXPECT_EQ(l.rows_per_layer(), 1u);
  EXPECT_EQ(l.row_bytes(), 144u);
  EXPECT_EQ(l.offset(1, 0), 4u * 144);
  EXPECT_EQ(l.index_offset(0), 3u * 4 * 144);
  EXPECT_EQ(l.index_offset(1), 3u * 4 * 144 + 4 * 128);
  EXPECT_EQ(l.token_bytes(), 3u * 144 + 2 * 128);
  EXPECT_EQ(l.block_bytes(), l.index_offset(1) + 4 * 128);
  EXPECT_NE(l.ToString().find("kind=mla index_layers=2 index_dim=64"), std::string::npos);
  const KvLayout glm52{78, 1, 576, 16, KvDtype::kF16, AttentionKind::kMla, 21, 128};
  EXPECT_EQ(glm52.token_bytes(), 78u * 576 * 2 + 21 * 128 * 2);  // 89,856 + 5,376 bytes
  EXPECT_NE(glm52, (KvLayout{78, 1, 576, 16, KvDtype::kF16}));
}

TEST(KvLayoutTest, RejectsInconsistentIndexerKeys) {
  EXPECT_FALSE((KvLayout{3, 1, 72, 4, KvDtype::kF16, AttentionKind::kMha, 2, 64}).Validate().ok());
  EXPECT_FALSE((KvLayout{3, 1, 72, 4, KvDtype::kF16, AttentionKind::kMla, 2, 0}).Validate().ok());
  EXPECT_FALSE((KvLayout{3, 1, 72, 4, KvDtype::kF16, AttentionKind::kMla, 4, 64}).Validate().ok());
  EXPECT_TRUE((KvLayout{3, 1, 72, 4, KvDtype::kF16, AttentionKind::kMla}).Validate().ok());
}

}  // namespace
}  // namespace pg
