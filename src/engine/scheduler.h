// Scheduler: decides, each step, which sequences run and with how many
// tokens. Policy only — no kernels, no KV bytes.
//
//  1. loading sequences whose promotions finished become running;
//  2. every running sequence that decodes gets one token (growing its block
//     table; when the device tier is out of blocks, the newest running
//     sequence is preempted by recompute — its published blocks stay in the
//     prefix cache, so with host/disk tiers this acts as a swap to host);
//  3. prefilling sequences get chunks from the token budget: oldest first
//     under the baseline policy; under the optimized one the fewest tokens
//     left first (a prefill past the fairness bound goes first), with the
//     waiting requests admitted before this pass so a newcomer competes, and
//     while the step is shared a long prefill advances only a slice, and
//     alone at most the long-prefill threshold (PlanPrefills:
//     EngineConfig::prefill_slice_tokens, long_prefill_tokens);
//  4. waiting requests are admitted while the budget, the sequence limit and
//     the device tier allow (admission control: a request whose blocks plus
//     one block of headroom per running sequence do not fit stays queued;
//     with nothing running it needs no headroom, and one that cannot fit
//     the device tier even then fails: Engine::Submit refuses those first).
//     Order: FCFS under the baseline policy; under the optimized policy the
//     request with the longest cached prefix among the first few waiting is
//     preferred, unless the head of the queue has waited past the fairness
//     bound.
//
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_config.h"
#include "engine/sequence.h"
#include "kv/kv_cache_manager.h"

namespace pg {

struct StepPlan {
  std::vector<Sequence*> batch;  // sequences to run, step_tokens set on each
  int64_t n_tokens = 0;
  std::vector<Sequence*> failed;  // could never fit; finish with an error
  bool empty() const { return batch.empty(); }
};

// "N tokens: id:k@pos ...": each sequence of the plan, the tokens it runs
// this step and the position they start at (the engine's debug step log).
std::string DescribeStep(const StepPlan& plan);

class Scheduler {
 public:
  Scheduler(const EngineConfig& config, KvCacheManager& kv);

  void AddWaiting(std::unique_ptr<Sequence> seq);
  // Removes a sequence wherever it is (cancel/finish), freeing its KV.
  std::unique_ptr<Sequence> Remove(Sequence* seq);
  Sequence* Find(const std::string& request_id);

  StepPlan Schedule(double now_s);

  size_t n_waiting() const { return waiting_.size(); }
  size_t n_running() const { return running_.size(); }
  size_t n_loading() const { return loading_.size(); }
  int64_t preemptions() const { return preemptions_; }
  bool idle() const { return waiting_.empty() && running_.empty() && loading_.empty(); }
  // Running sequences in admission order (the engine drafts for them before Schedule).
  const std::vector<std::unique_ptr<Sequence>>& running() const { return running_; }

 private:
  void PromoteLoaded(double now_s);
  bool EnsureBlocks(Sequence* seq, int64_t n_tokens_total, StepPlan* plan);
  void Preempt(Sequence* victim);
  // Admits one waiting request; with a budget it also gets its first chunk
  // (baseline), with none the prefill pass gives it one (shortest first).
  bool Admit(double now_s, int64_t* budget, StepPlan* plan);
  bool PlanDecode(Sequence* s, int64_t* budget, StepPlan* plan);
  bool Take(Sequence* s, int64_t chunk, int64_t* budget, StepPlan* plan);
  std::vector<Sequence*> PrefillOrder(double now_s, bool shortest_first) const;
  bool Overdue(const Sequence* s, double now_s) const;
  bool Shared(const StepPlan& plan, size_t n_prefills) const;
  void PlanPrefills(double now_s, bool shortest_first, int64_t* budget, StepPlan* plan);
  void StartRunning(Sequence* seq, double now_s);

  const EngineConfig& config_;
  KvCacheManager& kv_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> loading_;
  std::vector<std::unique_ptr<Sequence>> running_;  // in admission order
  int64_t preemptions_ = 0;
};

}  // namespace pg
