// Scripted scenarios for the KV hints (retain, pin, demote, prefetch), the
// session quotas and the fair-share mode, through KvCacheManager.
#include "kv/prefix_hints.h"

#include <gtest/gtest.h>

#include <optional>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::FakeEngine;
using kvtest::kModel;
using kvtest::Make;
using kvtest::Message;
using kvtest::TempDir;
using kvtest::Tiered;

#define EXPECT_INTEGRITY(kv) EXPECT_TRUE((kv).CheckIntegrity().ok()) << (kv).CheckIntegrity().ToString()

// The prompt of the first turn of conversation `conv`: 6 blocks of 4 tokens + 1.
std::vector<int32_t> Prompt(int conv) { return Message(conv, 0, 25); }

// Device 8 blocks, host 8, no disk; LRU. Conversation 1 runs, optionally
// gets `action` on its prompt, then conversations 2..5 push it out of both
// tiers. Returns how many of its prompt tokens are still cached.
int64_t SurvivingTokens(std::optional<PrefixAction> action, int64_t budget, PrefixHintResult* result = nullptr) {
  KvCacheConfig c = Tiered(8, 8, "", 0);
  c.eviction = EvictionKind::kLru;
  c.pin_budget_blocks = c.retain_budget_blocks = budget;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Prompt(1);
  eng.Turn(1, &a, 0);
  if (action) {
    PrefixHintResult r = kv->ApplyPrefixHint(Prompt(1), {}, *action, 600);
    if (result) *result = r;
  }
  for (int conv = 2; conv <= 5; ++conv) {
    std::vector<int32_t> t = Prompt(conv);
    eng.Turn(SeqId(conv), &t, 0);
  }
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_INTEGRITY(*kv);
  return kv->Match(Prompt(1), {}).tokens();
}

TEST(PrefixHintsTest, RetainedPrefixSurvivesPressureThatEvictsAnUnhintedOne) {
  EXPECT_EQ(SurvivingTokens(std::nullopt, 6), 0);
  PrefixHintResult r;
  EXPECT_EQ(SurvivingTokens(PrefixAction::kRetain, 6, &r), 24);
  EXPECT_EQ(r.blocks, 6);
  EXPECT_EQ(r.refused, "");
  // The default retain budget is half of host + disk: 4 blocks here.
  EXPECT_EQ(SurvivingTokens(PrefixAction::kRetain, -1, &r), 16);
  EXPECT_EQ(r.blocks, 4);
  EXPECT_EQ(r.refused, "retain budget of 4 blocks is full (4 of 6 prefix blocks held)");
}

TEST(PrefixHintsTest, PinnedPrefixSurvivesAndThePinBudgetRefusesTheRest) {
  PrefixHintResult r;
  EXPECT_EQ(SurvivingTokens(PrefixAction::kPin, 6, &r), 24);
  EXPECT_EQ(r.refused, "");
  EXPECT_EQ(SurvivingTokens(PrefixAction::kPin, -1, &r), 8);  // default budget: 1/4 of 8 host blocks = 2
  EXPECT_EQ(r.blocks, 2);
  EXPECT_EQ(r.refused, "pin budget of 2 blocks is full (2 of 6 prefix blocks held)");
}

TEST(PrefixHintsTest, PinWithinItsBudgetAndItsTtl) {
  double now = 0;
  KvCacheConfig c = Tiered(8, 8, "", 0);
  c.eviction = EvictionKind::kLru;
  c.pin_budget_blocks = 6;
  c.clock = [&now] { return now; };
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Prompt(1);
  eng.Turn(1, &a, 0);
  // Only the first 9 tokens: 2 full blocks.
  const std::vector<int32_t> head(a.begin(), a.begin() + 9);
  PrefixHintResult r = kv->ApplyPrefixHint(head, {}, PrefixAction::kPin, 30);
  EXPECT_EQ(r.blocks, 2);
  EXPECT_EQ(r.refused, "");
  EXPECT_EQ(kv->hint_counters().live_pinned, 2);
  for (int conv = 2; conv <= 5; ++conv) {
    std::vector<int32_t> t = Prompt(conv);
    eng.Turn(SeqId(conv), &t, 0);
  }
  EXPECT_EQ(kv->Match(Prompt(1), {}).tokens(), 8);  // the pinned head only
  now = 31;                                         // the pin expired
  EXPECT_EQ(kv->hint_counters().live_pinned, 0);
  for (int conv = 6; conv <= 9; ++conv) {
    std::vector<int32_t> t = Prompt(conv);
    eng.Turn(SeqId(conv), &t, 0);
  }
  EXPECT_EQ(kv->Match(Prompt(1), {}).tokens(), 0);
  EXPECT_INTEGRITY(*kv);
}

TEST(PrefixHintsTest, DemoteMovesThePrefixToHostAndPrefetchBringsItBack) {
  auto kv = Make(Tiered(16, 16, "", 0));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Prompt(1);
  eng.Turn(1, &a, 0);
  {
    PrefixMatch m = kv->Match(Prompt(1), {});
    EXPECT_EQ(m[kDeviceTier], 24);
  }
  PrefixHintResult d = kv->ApplyPrefixHint(Prompt(1), {}, PrefixAction::kDemote, -1);
  EXPECT_EQ(d.blocks, 6);
  {
    PrefixMatch m = kv->Match(Prompt(1), {});
    EXPECT_EQ(m[kDeviceTier], 0);
    EXPECT_EQ(m[kHostTier], 24);
  }
  EXPECT_EQ(kv->counters().tiers[kDeviceTier].demotions, 6);
  PrefixHintResult p = kv->ApplyPrefixHint(Prompt(1), {}, PrefixAction::kPrefetch, -1);
  EXPECT_EQ(p.blocks, 6);
  {  // Match waits for the prefetch loads
    PrefixMatch m = kv->Match(Prompt(1), {});
    EXPECT_EQ(m[kDeviceTier], 24);
  }
  // The prefetched bytes are the ones the forward pass wrote.
  std::vector<int32_t> a2 = Prompt(1);
  auto r = eng.Turn(2, &a2, 0);
  EXPECT_EQ(r[kDeviceTier], 24);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_GT(eng.checked(), 0);
  const HintCounters hc = kv->hint_counters();
  EXPECT_EQ(hc.demoted_blocks, 6);
  EXPECT_EQ(hc.prefetched_blocks, 6);
  EXPECT_INTEGRITY(*kv);
}

TEST(PrefixHintsTest, PrefetchUsesFreeDeviceSlotsOnlyAndDemoteKeepsBlocksWithoutALowerTier) {
  TempDir dir;
  auto kv = Make(Tiered(8, 0, dir.path(), 100));  // device + disk
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Prompt(1);
  eng.Turn(1, &a, 0);
  EXPECT_EQ(kv->ApplyPrefixHint(Prompt(1), {}, PrefixAction::kDemote, -1).blocks, 6);  // to disk
  std::vector<int32_t> b = Message(2, 0, 32);  // 8 full blocks: fills the device
  eng.Turn(2, &b, 0);
  EXPECT_EQ(kv->ApplyPrefixHint(Prompt(1), {}, PrefixAction::kPrefetch, -1).blocks, 0);  // no free slot
  EXPECT_INTEGRITY(*kv);

  auto dev_only = Make(KvCacheConfig::Baseline(kvtest::SmallLayout(), kModel, 8 * kvtest::kBlock));
  FakeEngine eng2(*dev_only, kModel);
  std::vector<int32_t> a2 = Prompt(1);
  eng2.Turn(1, &a2, 0);
  EXPECT_EQ(dev_only->ApplyPrefixHint(Prompt(1), {}, PrefixAction::kDemote, -1).blocks, 0);  // nowhere to go
  EXPECT_EQ(dev_only->Match(Prompt(1), {})[kDeviceTier], 24);
}

TEST(PrefixHintsTest, SessionQuotaEvictsTheSessionsOwnBlocksFirst) {
  KvCacheConfig c = Tiered(16, 6, "", 0);
  c.session_quota_device_blocks = 3;
  c.session_quota_host_blocks = 2;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  CacheRequest light, heavy;
  light.session = "light";
  heavy.session = "heavy";
  std::vector<int32_t> l = Message(1, 0, 13);  // 3 blocks: within the quota
  eng.Turn(1, &l, 0, light);
  std::vector<int32_t> h = Prompt(2);  // 6 blocks: 3 over
  eng.Turn(2, &h, 0, heavy);
  PrefixMatch ml = kv->Match(Message(1, 0, 13), light);
  EXPECT_EQ(ml[kDeviceTier], 12);  // untouched
  ml = PrefixMatch();
  PrefixMatch mh = kv->Match(Prompt(2), heavy);
  EXPECT_EQ(mh[kDeviceTier], 0);  // its oldest 3 (the head) went down: the match stops at block 0
  mh = PrefixMatch();
  const HintCounters hc = kv->hint_counters();
  EXPECT_EQ(hc.quota_evictions, 3 + 1);  // 3 device copies; of the 3 host copies 1 over the host quota of 2
  EXPECT_EQ(hc.policy_dropped, 1);
  const auto chain = kvtest::ChainOf(RootHash(kModel, ""), Prompt(2), 4);
  EXPECT_TRUE(kvtest::DroppedByPolicy(*kv, chain[0]));  // the oldest copy went first
  EXPECT_FALSE(kvtest::DroppedByPolicy(*kv, chain[5]));
  // The next turn's miss reason names the quota: policy, not evicted.
  const std::vector<int32_t> again = Prompt(2);
  PrefixMatch m = kv->Match(again, heavy);
  kv->ExplainMisses(&m, again);
  std::vector<BlockId> table;
  ASSERT_TRUE(kv->AllocateSequence(99, std::move(m), int64_t(again.size()), &table).ok());
  while (!kv->PromotionReady(99, &table)) kv->Tick();
  const MissCounts mc = kv->Misses(99);
  EXPECT_EQ(mc.evicted_total(), 0);
  EXPECT_GE(mc.policy, kv->page_tokens());
  EXPECT_EQ(mc.total(), int64_t(again.size()) - kv->CachedTokens(99));
  kv->FreeSequence(99);
  EXPECT_INTEGRITY(*kv);
}

TEST(PrefixHintsTest, BadQuotaConfigNamesTheFlag) {
  KvCacheConfig c = Tiered(8, 0, "", 0);
  c.session_quota_host_blocks = 2;
  auto r = KvCacheManager::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--kv-session-quota-host"), std::string::npos);
  c.session_quota_host_blocks = 0;
  c.session_quota_device_blocks = -1;
  EXPECT_FALSE(KvCacheManager::Create(c).ok());
}

// One heavy session and three light ones on a device of 12 blocks and a host
// of 16 (no disk): light sessions open a 3-block conversation each, then the
// heavy one runs turns of fresh 3-block prompts; then each light session
// comes back. Returns the light sessions' reused tokens (ideal: 3 x 12).
// The host's fair share is 16 / 4 = 4 blocks: the light sessions stay within
// it, so once the host is full the heavy session is above it.
int64_t LightReuse(bool fair_share) {
  KvCacheConfig c = Tiered(12, 16, "", 0);
  c.eviction = EvictionKind::kLru;
  c.fair_share = fair_share;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  SeqId id = 1;
  std::vector<std::vector<int32_t>> light;
  for (int i = 0; i < 3; ++i) {
    CacheRequest r;
    r.session = "light-" + std::to_string(i);
    light.push_back(Message(10 + i, 0, 13));
    std::vector<int32_t> t = light.back();
    eng.Turn(id++, &t, 0, r);
  }
  CacheRequest heavy;
  heavy.session = "heavy";
  for (int turn = 0; turn < 12; ++turn) {
    std::vector<int32_t> t = Message(99, turn, 13);
    eng.Turn(id++, &t, 0, heavy);
  }
  int64_t reused = 0;
  for (int i = 0; i < 3; ++i) {
    CacheRequest r;
    r.session = "light-" + std::to_string(i);
    std::vector<int32_t> t = light[size_t(i)];
    t.push_back(7);
    reused += eng.Turn(id++, &t, 0, r).total();
  }
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_INTEGRITY(*kv);
  return reused;
}

TEST(PrefixHintsTest, FairShareKeepsTheLightSessionsContext) {
  EXPECT_EQ(LightReuse(false), 0);  // LRU: the heavy session pushed them out of both tiers
  EXPECT_EQ(LightReuse(true), 36);  // fair share: the heavy session gave up its own blocks
}

}  // namespace
}  // namespace pg
