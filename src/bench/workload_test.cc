// Workload determinism, trace parsing and prefix sharing against hash_ids.
#include "bench/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/hashed_prompt.h"
#include "bench/prefix_reuse.h"
#include "bench/trace_kv_cache_tester.h"
#include "bench/trace_mooncake.h"
#include "bench/workload_agentic.h"

namespace pg::bench {
namespace {

TokenSpace Space(uint64_t seed = 7) { return *TokenSpace::ForVocab(32000, seed); }

std::vector<std::vector<int32_t>> AllPrompts(const SessionScript& s) {
  std::vector<std::vector<int32_t>> out;
  for (const auto& e : s.events) {
    if (e.kind == SessionEvent::Kind::kRequest) out.push_back(e.prompt);
  }
  for (const auto& c : s.children) {
    for (auto& p : AllPrompts(c)) out.push_back(std::move(p));
  }
  return out;
}

size_t Lcp(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Independent ideal reuse: for each prompt, the longest whole-block prefix
// (leaving one token) that some earlier prompt starts with, by direct compare.
int64_t BruteIdeal(const std::vector<std::vector<int32_t>>& prompts, size_t i, int64_t block) {
  int64_t best = 0;
  for (size_t k = 0; k < i; ++k) {
    int64_t lcp = static_cast<int64_t>(Lcp(prompts[i], prompts[k]));
    int64_t cap = (static_cast<int64_t>(prompts[i].size()) - 1) / block * block;
    best = std::max(best, std::min(lcp / block * block, cap));
  }
  return best;
}

TEST(TokenSpace, RangeAndWords) {
  auto s = TokenSpace::ForVocab(151936, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->lo(), 1000);
  EXPECT_EQ(s->hi(), 151936 - 151936 / 16);
  auto small = TokenSpace::ForVocab(256, 1);
  EXPECT_EQ(small->lo(), 64);
  EXPECT_EQ(small->hi(), 240);
  EXPECT_FALSE(TokenSpace::ForVocab(10, 1).ok());
  for (int i = 0; i < 2000; ++i) {
    int32_t t = s->TokenAt(3, static_cast<uint64_t>(i), 5);
    EXPECT_GE(t, s->lo());
    EXPECT_LT(t, s->hi());
  }
  EXPECT_NE(TokenSpace::WordFor(1), TokenSpace::WordFor(106));
  EXPECT_EQ(TokenSpace::WordFor(0), " ba");
  EXPECT_EQ(TokenSpace::TextFor({1, 2}), TokenSpace::WordFor(1) + TokenSpace::WordFor(2));
}

TEST(AgenticWorkload, DeterministicAndSharesPrefixes) {
  WorkloadOptions opt;
  opt.ctx_max = 2048;
  opt.turns = 6;
  opt.sessions = 3;
  opt.out_median = 32;
  auto a = AgenticWorkload::Create(Space(), opt);
  auto b = AgenticWorkload::Create(Space(), opt);
  ASSERT_TRUE(a.ok());
  for (int k = 0; k < 5; ++k) {
    SessionScript sa = (*a)->MakeSession(k), sb = (*b)->MakeSession(k);
    ASSERT_EQ(sa.events.size(), sb.events.size());
    ASSERT_GE(sa.events.size(), 2u);
    for (size_t i = 0; i < sa.events.size(); ++i) {
      EXPECT_EQ(sa.events[i].prompt, sb.events[i].prompt);
      EXPECT_EQ(sa.events[i].max_tokens, sb.events[i].max_tokens);
      EXPECT_EQ(sa.events[i].wait_before_s, sb.events[i].wait_before_s);
      EXPECT_LE(static_cast<int64_t>(sa.events[i].prompt.size()) + sa.events[i].max_tokens, opt.ctx_max);
      if (i > 0) {  // each turn extends the previous prompt
        const auto& prev = sa.events[i - 1].prompt;
        EXPECT_EQ(Lcp(prev, sa.events[i].prompt), prev.size());
        EXPECT_GT(sa.events[i].prompt.size(), prev.size() + static_cast<size_t>(sa.events[i - 1].max_tokens));
      }
    }
  }
  // Sessions share the system + tools prefix (0.38 * ctx_max) and no more.
  auto p0 = (*a)->MakeSession(0).events[0].prompt;
  auto p1 = (*a)->MakeSession(1).events[0].prompt;
  size_t shared = std::llround(0.08 * 2048) + std::llround(0.30 * 2048);
  EXPECT_GE(Lcp(p0, p1), shared);
  EXPECT_LT(Lcp(p0, p1), shared + 4);
  // A different seed changes the content.
  auto c = AgenticWorkload::Create(Space(8), opt);
  EXPECT_NE((*c)->MakeSession(0).events[0].prompt, p0);
  opt.ctx_max = 10;
  EXPECT_FALSE(AgenticWorkload::Create(Space(), opt).ok());
}

const char* kTinyTrace = R"({"id": "t1", "block_size": 64, "hash_id_scope": "local", "requests": [
  {"t": 0, "type": "n", "in": 200, "out": 10, "hash_ids": [1, 2, 3], "think_time": 0},
  {"t": 5, "type": "n", "in": 300, "out": 20, "hash_ids": [1, 2, 3, 4], "think_time": 2.0},
  {"t": 6, "type": "subagent", "requests": [
     {"t": 6, "type": "n", "in": 130, "out": 5, "hash_ids": [1, 9], "think_time": 0}]},
  {"t": 9, "type": "n", "in": 320, "out": 8, "hash_ids": [1, 2, 3, 4, 5], "think_time": 1.0}]})";

TEST(KvCacheTester, ParsesScalesAndSpawnsSubagents) {
  auto t = ParseKvTrace(kTinyTrace, "tiny");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  WorkloadOptions opt;
  opt.length_scale = 0.125;  // 64-token blocks -> 8 tokens
  opt.time_scale = 0.5;
  auto w = KvCacheTesterWorkload::FromTraces({*t}, Space(), opt);
  SessionScript s = w->MakeSession(0);
  ASSERT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.events[1].wait_before_s, 1.0);
  EXPECT_EQ(s.events[0].prompt.size(), 3u * 8 + 1);  // 200 - 192 = 8 extra tokens -> 1
  EXPECT_EQ(s.events[0].max_tokens, 1);              // round(10 / 8)
  EXPECT_EQ(s.events[2].kind, SessionEvent::Kind::kSpawn);
  ASSERT_EQ(s.children.size(), 1u);
  EXPECT_EQ(CountRequests(s), 4);
  // Shared hash ids give shared tokens, up to the first differing id.
  EXPECT_EQ(Lcp(s.events[0].prompt, s.events[1].prompt) / 8, 3u);
  EXPECT_EQ(Lcp(s.events[1].prompt, s.events[3].prompt) / 8, 4u);
  EXPECT_EQ(Lcp(s.children[0].events[0].prompt, s.events[0].prompt) / 8, 1u);
  // Local scope: instance 1 of the same trace is fresh content; global is shared.
  SessionScript again = w->MakeSession(1);
  EXPECT_LT(Lcp(again.events[0].prompt, s.events[0].prompt), 8u);
  t->global_scope = true;
  auto g = KvCacheTesterWorkload::FromTraces({*t}, Space(), opt);
  EXPECT_EQ(Lcp(g->MakeSession(1).events[0].prompt, g->MakeSession(0).events[0].prompt), 24u);
  // max_context truncates the session before the first request that exceeds it.
  opt.max_context = 36;
  auto cut = KvCacheTesterWorkload::FromTraces({*t}, Space(), opt);
  EXPECT_EQ(cut->MakeSession(0).events.size(), 1u);
  opt.max_context = 10;
  EXPECT_EQ(KvCacheTesterWorkload::FromTraces({*t}, Space(), opt)->SessionsPerPass(), 0);
}

TEST(KvCacheTester, RejectsBadTraces) {
  EXPECT_FALSE(ParseKvTrace("not json", "x").ok());
  EXPECT_FALSE(ParseKvTrace(R"({"requests": 3})", "x").ok());
  EXPECT_FALSE(ParseKvTrace(R"({"requests": [{"in": 5, "out": 1}]})", "x").ok());
  EXPECT_FALSE(ParseKvTrace(R"({"requests": [{"in": -5, "out": 1, "hash_ids": []}]})", "x").ok());
  EXPECT_FALSE(ParseKvTrace(R"({"hash_id_scope": "weird", "requests": []})", "x").ok());
  EXPECT_FALSE(ParseKvTrace(R"({"block_size": 0, "requests": []})", "x").ok());
  auto st = ParseKvTrace(R"({"requests": [{"in": 5, "out": 1, "hash_ids": ["a"]}]})", "f.json");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("f.json request 0"), std::string::npos);
}

// The real traces: prompts share exactly the blocks their hash_ids share, and
// the tracker's ideal reuse equals one computed from the hash_ids alone.
TEST(KvCacheTester, RealTracesPrefixSharingMatchesHashIds) {
  std::string dir = std::string(PROSGROW_SHARED_DIR) + "/data/traces/kv-cache-tester";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "needs ../shared/data/traces: none at " << dir;
  WorkloadOptions opt;
  opt.length_scale = 0.125;
  auto w = KvCacheTesterWorkload::Load(dir, Space(), opt);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ((*w)->SessionsPerPass(), 8);
  EXPECT_EQ((*w)->Describe(), (*KvCacheTesterWorkload::Load(dir, Space(), opt))->Describe());
  const int64_t B = 8;
  for (int64_t k = 0; k < 8; ++k) {
    const KvTrace& trace = (*w)->traces()[static_cast<size_t>(k)];
    std::vector<const KvTraceEntry*> reqs;
    for (const auto& e : trace.requests) {
      if (!e.subagent) reqs.push_back(&e);
    }
    SessionScript s = (*w)->MakeSession(k);
    // Same determinism on a second build.
    EXPECT_EQ(AllPrompts(s), AllPrompts((*w)->MakeSession(k)));
    ASSERT_EQ(s.events.size(), reqs.size());
    PrefixReuseTracker tracker(B);
    int64_t tracked = 0, from_ids = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const auto& p = s.events[i].prompt;
      int64_t best_ids = 0;
      for (size_t j = 0; j < i; ++j) {
        const auto& a = reqs[i]->hash_ids;
        const auto& b = reqs[j]->hash_ids;
        int64_t common = 0;
        while (common < static_cast<int64_t>(std::min(a.size(), b.size())) && a[common] == b[common]) ++common;
        best_ids = std::max(best_ids, common);
        // Token prefix shared == blocks shared by the ids (to the block).
        EXPECT_EQ(static_cast<int64_t>(Lcp(p, s.events[j].prompt)) / B, common) << trace.id << " " << i << "," << j;
      }
      from_ids += std::min(best_ids * B, (static_cast<int64_t>(p.size()) - 1) / B * B);
      tracked += tracker.Observe(p);
    }
    EXPECT_EQ(tracked, from_ids) << trace.id;
    EXPECT_GT(tracked, 0);
  }
}

TEST(PrefixReuseTracker, MatchesBruteForce) {
  std::vector<std::vector<int32_t>> prompts;
  TokenSpace sp = Space(3);
  // Prompts built from a few shared stems with random extensions.
  for (int i = 0; i < 40; ++i) {
    std::vector<int32_t> p;
    sp.AppendBlock(0, static_cast<uint64_t>(i % 3), 20 + (i % 5) * 7, &p);
    sp.AppendBlock(1, static_cast<uint64_t>(i % 4), (i * 13) % 37, &p);
    sp.AppendBlock(2, static_cast<uint64_t>(i), 1 + i % 9, &p);
    prompts.push_back(p);
  }
  for (int64_t block : {1, 4, 16}) {
    PrefixReuseTracker t(block);
    for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(t.Observe(prompts[i]), BruteIdeal(prompts, i, block));
  }
}

// The Mooncake workload of a JSONL text (null when the text does not parse).
std::unique_ptr<MooncakeWorkload> MooncakeFrom(const std::string& text, const WorkloadOptions& opt) {
  auto reqs = ParseMooncake(text, "m.jsonl");
  EXPECT_TRUE(reqs.ok()) << reqs.status().ToString();
  return reqs.ok() ? MooncakeWorkload::FromRequests(*reqs, Space(), opt) : nullptr;
}

TEST(Mooncake, ParsesAndBuildsSharedBlocks) {
  std::string text =
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 10, \"hash_ids\": [0, 1]}\n"
      "\n"
      "{\"timestamp\": 1500, \"input_length\": 1300, \"output_length\": 20, \"hash_ids\": [0, 1, 2]}\n";
  WorkloadOptions opt;
  opt.length_scale = 1.0 / 64;  // 512 -> 8 tokens
  opt.time_scale = 2;
  auto w = MooncakeFrom(text, opt);
  ASSERT_TRUE(w);
  ASSERT_EQ(w->SessionsPerPass(), 2);
  EXPECT_FALSE(w->Recyclable());
  SessionScript a = w->MakeSession(0), b = w->MakeSession(1);
  EXPECT_EQ(b.events[0].arrival_s, 3.0);
  EXPECT_EQ(a.events[0].prompt.size(), 16u);  // round(1000/64) = 16 = two full blocks
  EXPECT_EQ(b.events[0].prompt.size(), 20u);  // partial third block cut to round(1300/64)
  EXPECT_EQ(Lcp(a.events[0].prompt, b.events[0].prompt), 16u);
  auto bad = ParseMooncake("{\"timestamp\": 0}\n", "m.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.jsonl line 1"), std::string::npos);
}

// Requests longer than max_context (input + output, scaled) are dropped and
// counted; the others keep their order.
TEST(Mooncake, MaxContextDropsAndCountsLongRequests) {
  std::string text =
      "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 1, \"input_length\": 900, \"output_length\": 10, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 2, \"input_length\": 80, \"output_length\": 20, \"hash_ids\": [0]}\n";
  WorkloadOptions opt;
  opt.max_context = 110;
  auto w = MooncakeFrom(text, opt);
  ASSERT_TRUE(w);
  ASSERT_EQ(w->SessionsPerPass(), 2);
  EXPECT_EQ(w->MakeSession(1).events[0].arrival_s, 0.002);
  EXPECT_NE(w->Describe().find("1 skipped by max_context"), std::string::npos) << w->Describe();
}

TEST(MakeWorkload, RejectsUnknownSpecsAndBadScales) {
  WorkloadOptions opt;
  EXPECT_FALSE(MakeWorkload("nope", Space(), opt).ok());
  EXPECT_FALSE(MakeWorkload("trace:kv-cache-tester:/does/not/exist", Space(), opt).ok());
  EXPECT_FALSE(MakeWorkload("trace:mooncake:/does/not/exist", Space(), opt).ok());
  opt.length_scale = 0;
  EXPECT_FALSE(MakeWorkload("agentic", Space(), opt).ok());
  opt.length_scale = 1;
  EXPECT_TRUE(MakeWorkload("agentic", Space(), opt).ok());
}

}  // namespace
}  // namespace pg::bench
