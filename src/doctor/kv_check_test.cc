#include "doctor/kv_check.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

// GLM-5.2 at full size (78 layers, kv LoRA 512 + rope 64 latent rows, the
// indexer's 128-element keys on every layer, f16): 88 KiB of latent rows
// plus the indexer keys per token, as the issue states it.
TEST(KvCheck, GlmDsaAtFullSizeIsAbout88KiBOfLatentPlusTheIndexerKeys) {
  KvLayout l;
  l.n_layers = 78;
  l.n_kv_heads = 1;
  l.head_dim = 512 + 64;
  l.kind = AttentionKind::kMla;
  l.n_index_layers = 78;
  l.index_dim = 128;
  EXPECT_EQ(size_t(78) * 576 * 2, 89856u);  // 87.75 KiB of latent rows
  EXPECT_EQ(l.token_bytes(), 89856u + 78u * 128 * 2);
  CheckResult r = CheckKvBytes(l, {.device = l.block_bytes() * 10, .host = 0, .disk = l.block_bytes() * 100});
  EXPECT_EQ(r.verdict, CheckResult::Verdict::kOk);
  EXPECT_NE(r.detail.find("107.25 KiB per token (78 layers x latent 576 x f16 + 78 indexer layers x key 128 x f16)"),
            std::string::npos)
      << r.detail;
  EXPECT_NE(r.detail.find("device tier holds 160 tokens, disk 1600"), std::string::npos) << r.detail;
  EXPECT_EQ(r.detail.find("host"), std::string::npos) << r.detail;
}

TEST(KvCheck, GqaModelsCountKAndVPerHead) {
  KvLayout l{24, 2, 64, 16, KvDtype::kBF16};
  EXPECT_EQ(KvTokenParts(l), "24 layers x K+V 2 x 64 x bf16");
  CheckResult r = CheckKvBytes(l, {.device = 1 << 20, .host = 4 << 20, .disk = 0});
  EXPECT_NE(r.detail.find("12.00 KiB per token"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("device tier holds 80 tokens, host 336"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace pg
