// The tiered multi-turn workload of the KV end-to-end tests (issue 3; issue
// 21's guarded and device runs): two conversations interleaved A1 B1 A2 B2
// ..., both opening with one seeded 40-token system prompt. Turn t of
// conversation c is the previous prompt + its answer + a new seeded message of
// 20 + 7t + c tokens, answered greedily with logprobs in session "conv-a" or
// "conv-b". Run once on an engine with the prefix cache off (the reference)
// and once on a tiered engine whose device tier is too small for both
// conversations, every turn's output must be the same.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace pg::test {

struct TurnResult {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  CacheUsage cache;
  std::string finish;
};

// One greedy turn of max_tokens tokens (EOS ignored) with logprobs, run to
// the end (caller-driven engine: Submit, then RunUntilIdle).
TurnResult RunTurn(Engine& e, const std::vector<int32_t>& prompt, int max_tokens, const std::string& session);

// Tokens of a "user message": n seeded ids in the ordinary range of the vocab.
std::vector<int32_t> Message(std::mt19937& rng, int n, int32_t vocab);

struct MultiTurnWorkload {
  int turns = 5;        // per conversation
  uint32_t seed = 11;   // of every message
  int max_tokens = 12;  // per answer
};

struct Conversation {
  std::vector<std::vector<int32_t>> prompts;  // per turn
  std::vector<TurnResult> results;            // per turn
};

// The two conversations, [0] = "conv-a", [1] = "conv-b".
std::vector<Conversation> RunConversations(Engine& e, const MultiTurnWorkload& w, int32_t vocab);

// The reference engine's configuration: the model, 2 threads, the optimized
// policy, the prefix cache off, an 8 MiB device tier.
EngineConfig ReferenceConfig(const std::string& model_path);

// `reference` with the prefix cache on (every hit promoted), a device tier of
// device_blocks KV blocks of `mc`, host_blocks on the host, and 64 MiB on disk
// in disk_dir.
EngineConfig TieredConfig(const EngineConfig& reference, const ModelConfig& mc, int64_t device_blocks,
                          int64_t host_blocks, const std::string& disk_dir);

// The same tokens (a fatal failure) and logprobs within 1e-4.
void ExpectSameTurn(const TurnResult& want, const TurnResult& got);

// Every turn of `got` as ExpectSameTurn against `want`; some prompt tokens
// reused, some of them from host or disk; and `k` (the tiered engine's
// counters) shows device evictions and promotions from host or disk.
void ExpectSameOutputsThroughTheTiers(const std::vector<Conversation>& want, const std::vector<Conversation>& got,
                                      const CacheCounters& k);

}  // namespace pg::test
