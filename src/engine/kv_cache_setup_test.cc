#include "engine/kv_cache_setup.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

ModelConfig SmallModel() {
  ModelConfig mc;
  mc.n_layer = 2;
  mc.n_head_kv = 4;
  mc.head_dim = 8;
  return mc;
}

TEST(KvCacheSetup, LayoutTakesTheModelsShapeAndTheConfigsPageAndDtype) {
  EngineConfig c;
  c.page_tokens = 32;
  c.kv_bf16 = true;
  const KvLayout l = KvLayoutOf(SmallModel(), c);
  EXPECT_EQ(l.n_layers, 2);
  EXPECT_EQ(l.n_kv_heads, 4);
  EXPECT_EQ(l.head_dim, 8);
  EXPECT_EQ(l.page_tokens, 32);
  EXPECT_EQ(l.dtype, KvDtype::kBF16);
  c.kv_bf16 = false;
  EXPECT_EQ(KvLayoutOf(SmallModel(), c).dtype, KvDtype::kF16);
}

TEST(KvCacheSetup, BaselineIsDeviceOnlyAndOptimizedAddsTheTiers) {
  EngineConfig c;
  c.kv_device_bytes = 1 << 20;
  c.kv_disk_dir = "/tmp/unused-kv-dir";
  const KvLayout l = KvLayoutOf(SmallModel(), c);

  c.policy = ServePolicy::kBaseline;
  auto base = KvCacheConfigOf(c, l, "model-id");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_EQ(base->model_identity, "model-id");
  EXPECT_EQ(base->device_bytes, 1u << 20);
  EXPECT_EQ(base->host_bytes, 0u);
  EXPECT_EQ(base->disk_dir, "");
  EXPECT_EQ(base->min_promote_tokens, KvCacheConfig{}.min_promote_tokens);

  c.policy = ServePolicy::kOptimized;
  auto opt = KvCacheConfigOf(c, l, "model-id");
  ASSERT_TRUE(opt.ok()) << opt.status().ToString();
  EXPECT_EQ(opt->host_bytes, 4u << 20);  // 4x the device tier by default
  EXPECT_EQ(opt->disk_dir, "/tmp/unused-kv-dir");
  EXPECT_EQ(opt->disk_bytes, 4ull << 30);
  EXPECT_EQ(opt->min_promote_tokens, c.min_promote_tokens);
  EXPECT_EQ(opt->default_session_ttl_s, c.session_ttl_s);
}

TEST(KvCacheSetup, SharedSettingsAndPolicyNames) {
  EngineConfig c;
  c.prefix_cache = false;
  c.kv_remote = "redis://127.0.0.1:6379";
  c.kv_remote_ttl_s = 5;
  c.eviction = "lru";
  c.write_policy = "write-through";
  const KvLayout l = KvLayoutOf(SmallModel(), c);
  auto kc = KvCacheConfigOf(c, l, "id");
  ASSERT_TRUE(kc.ok()) << kc.status().ToString();
  EXPECT_FALSE(kc->prefix_cache);
  EXPECT_EQ(kc->remote.url, "redis://127.0.0.1:6379");
  EXPECT_EQ(kc->remote.ttl_s, 5);
  EXPECT_EQ(kc->eviction, EvictionKind::kLru);
  EXPECT_EQ(kc->write_policy, WritePolicy::kWriteThrough);

  c.eviction = "newest";
  EXPECT_EQ(KvCacheConfigOf(c, l, "id").status().code(), StatusCode::kInvalidArgument);
  c.eviction = "";
  c.write_policy = "sometimes";
  EXPECT_EQ(KvCacheConfigOf(c, l, "id").status().code(), StatusCode::kInvalidArgument);
}

TEST(KvCacheSetup, DevicePagesAreTheCachesArena) {
  EngineConfig c;
  c.policy = ServePolicy::kBaseline;
  const KvLayout l = KvLayoutOf(SmallModel(), c);
  c.kv_device_bytes = 8 * l.block_bytes();
  auto kc = KvCacheConfigOf(c, l, "id");
  ASSERT_TRUE(kc.ok()) << kc.status().ToString();
  auto kv = KvCacheManager::Create(std::move(*kc));
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  const KvPages pages = DevicePagesOf(**kv, l);
  EXPECT_EQ(pages.base, (*kv)->DeviceBlockPtr(0));
  EXPECT_GE(pages.block_bytes, l.block_bytes());
  EXPECT_EQ(pages.layout.page_tokens, l.page_tokens);
  EXPECT_EQ(pages.kv_dim(), 4 * 8);
  ASSERT_GT((*kv)->device_blocks(), 1);
  EXPECT_EQ(pages.base + (*kv)->device_blocks() / 2 * pages.block_bytes,
            (*kv)->DeviceBlockPtr(static_cast<BlockId>((*kv)->device_blocks() / 2)));
}

}  // namespace
}  // namespace pg
