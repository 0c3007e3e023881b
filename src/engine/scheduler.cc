#include "engine/scheduler.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"

namespace pg {
namespace {

constexpr size_t kCacheAwareWindow = 8;  // waiting requests examined per admission

CacheRequest CacheRequestOf(const Sequence& s, const EngineConfig& c) {
  CacheRequest r;
  r.salt = s.request.cache_salt;
  r.session = s.request.session_id;
  r.use_prefix_cache = c.prefix_cache;
  return r;
}

MissReasons MissReasonsOf(const MissCounts& m) {
  MissReasons r;
  r.never_seen = m.never_seen;
  for (int t = 0; t < kLocalTiers; ++t) r.evicted_by_tier[t] = m.evicted[t];  // MissCounts::evicted: device, host, disk
  r.evicted = m.evicted_total();
  r.evicted_age_s = m.evicted_age_s;
  r.diverged = m.diverged;
  r.loading = m.loading;
  r.policy = m.policy;
  return r;
}

}  // namespace

Scheduler::Scheduler(const EngineConfig& config, KvCacheManager& kv) : config_(config), kv_(kv) {}

void Scheduler::AddWaiting(std::unique_ptr<Sequence> seq) {
  seq->state = SeqState::kWaiting;
  kv_.StartRemoteLookup(seq->id, seq->tokens, CacheRequestOf(*seq, config_));  // remote tier: read on a miss
  waiting_.push_back(std::move(seq));
}

Sequence* Scheduler::Find(const std::string& request_id) {
  for (auto& s : waiting_)
    if (s->request.id == request_id) return s.get();
  for (auto& s : loading_)
    if (s->request.id == request_id) return s.get();
  for (auto& s : running_)
    if (s->request.id == request_id) return s.get();
  return nullptr;
}

std::unique_ptr<Sequence> Scheduler::Remove(Sequence* seq) {
  auto take = [&](auto& list) -> std::unique_ptr<Sequence> {
    for (auto it = list.begin(); it != list.end(); ++it)
      if (it->get() == seq) {
        std::unique_ptr<Sequence> out = std::move(*it);
        list.erase(it);
        return out;
      }
    return nullptr;
  };
  std::unique_ptr<Sequence> out = take(waiting_);
  if (!out) out = take(loading_);
  if (!out) out = take(running_);
  if (out && out->state != SeqState::kWaiting) kv_.FreeSequence(out->id);
  if (out) {
    out->block_table.clear();
    out->state = SeqState::kFinished;
  }
  return out;
}

void Scheduler::StartRunning(Sequence* s, double now_s) {
  s->state = SeqState::kRunning;
  s->n_computed = kv_.CachedTokens(s->id);
  s->n_committed_blocks = s->n_computed / kv_.page_tokens();
  if (!s->cache_reported) {
    static_cast<TierTokens&>(s->cache) = kv_.Reuse(s->id);
    s->cache.cached_tokens = s->cache.total();
    s->cache.miss = MissReasonsOf(kv_.Misses(s->id));
    if (s->cache.miss.evicted > 0)
      PG_LOG_DEBUG("{}: {} prompt tokens missed as evicted (device {}, host/disk {}), {:.1f} s after the eviction",
                   s->request.id, s->cache.miss.evicted, s->cache.miss.evicted_by_tier[kDeviceTier],
                   s->cache.miss.evicted - s->cache.miss.evicted_by_tier[kDeviceTier], s->cache.miss.evicted_age_s);
    s->cache_reported = true;
  }
  if (s->first_scheduled_s < 0) s->first_scheduled_s = now_s;
}

void Scheduler::PromoteLoaded(double now_s) {
  for (size_t i = 0; i < loading_.size();) {
    Sequence* s = loading_[i].get();
    if (kv_.PromotionReady(s->id, &s->block_table)) {
      StartRunning(s, now_s);
      running_.push_back(std::move(loading_[i]));
      loading_.erase(loading_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Scheduler::Preempt(Sequence* victim) {
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    if (it->get() != victim) continue;
    std::unique_ptr<Sequence> s = std::move(*it);
    running_.erase(it);
    kv_.FreeSequence(s->id);
    s->block_table.clear();
    s->allocated_tokens = 0;
    s->n_computed = 0;
    s->n_committed_blocks = 0;
    s->draft.clear();
    s->state = SeqState::kWaiting;
    s->preemptions++;
    preemptions_++;
    PG_LOG_DEBUG("preempted {} ({} tokens)", s->request.id, s->tokens.size());
    waiting_.push_front(std::move(s));
    return;
  }
}

// Grows seq's block table to hold n_tokens_total positions, preempting the
// newest other running sequences when the device tier is full. False when seq
// itself had to be preempted (or cannot fit at all: then it is in plan->failed).
bool Scheduler::EnsureBlocks(Sequence* seq, int64_t n_tokens_total, StepPlan* plan) {
  int64_t grow = n_tokens_total - seq->allocated_tokens;
  if (grow <= 0) return true;
  while (!kv_.CanAppend(seq->id, grow)) {
    // Newest running sequence other than seq that is not in this step's batch yet.
    Sequence* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      Sequence* c = it->get();
      if (c == seq) continue;
      if (std::find(plan->batch.begin(), plan->batch.end(), c) != plan->batch.end()) continue;
      victim = c;
      break;
    }
    if (!victim) {
      if (running_.size() == 1 && loading_.empty() && plan->batch.empty()) {
        plan->failed.push_back(seq);  // alone and still no room: the context exceeds the device tier
      } else {
        Preempt(seq);
      }
      return false;
    }
    Preempt(victim);
  }
  Status st = kv_.Append(seq->id, grow, &seq->block_table);
  if (!st.ok()) {
    PG_LOG_WARN("append failed for {}: {}", seq->request.id, st.ToString());
    Preempt(seq);
    return false;
  }
  seq->allocated_tokens = n_tokens_total;
  return true;
}

bool Scheduler::Admit(double now_s, int64_t* budget, StepPlan* plan) {
  if (waiting_.empty() || static_cast<int64_t>(running_.size() + loading_.size()) >= config_.max_seqs) return false;
  // Pick the candidate.
  size_t pick = 0;
  PrefixMatch match;
  const bool cache_aware = config_.policy == ServePolicy::kOptimized && config_.prefix_cache;
  if (cache_aware && waiting_.size() > 1 && now_s - waiting_.front()->arrival_s < config_.fairness_s) {
    int64_t best = -1;
    size_t n = std::min(waiting_.size(), kCacheAwareWindow);
    for (size_t i = 0; i < n; ++i) {
      Sequence* s = waiting_[i].get();
      if (kv_.RemoteLookupPending(s->id)) continue;  // its remote blocks are on their way (bounded wait)
      PrefixMatch m = kv_.Match(s->tokens, CacheRequestOf(*s, config_));
      // Device hits are free; host hits cost a copy: weigh them a little less.
      int64_t score = m[kDeviceTier] * 4 + (m[kHostTier] + m[kDiskTier]) * 3;
      if (score > best) {
        best = score;
        pick = i;
        match = std::move(m);
      }
    }
    if (best < 0) return false;  // every candidate waits for its remote lookup
  } else {
    Sequence* s = waiting_.front().get();
    if (kv_.RemoteLookupPending(s->id)) return false;  // the remote tier answers by its deadline
    match = kv_.Match(s->tokens, CacheRequestOf(*s, config_));
  }
  Sequence* s = waiting_[pick].get();
  const int64_t total = static_cast<int64_t>(s->tokens.size());
  const int64_t need = kv_.BlocksNeeded(match, total);
  // Headroom keeps room for the running sequences to grow; a sequence alone
  // needs none (it may take every block), so a request that fits the tier
  // alone is never left waiting for headroom that cannot come.
  const bool alone = running_.empty() && loading_.empty();
  const int64_t headroom = alone ? 0 : static_cast<int64_t>(running_.size() + loading_.size()) + 1;
  bool room = kv_.CanAllocate(need + headroom);
  if (!room && alone && need <= kv_.device_blocks()) {
    // Blocks pinned by copies still in flight (a cancelled promotion) come back when they land.
    kv_.WaitIdle();
    room = kv_.CanAllocate(need);
  }
  if (!room) {
    // Nothing running and it still cannot fit: it never will.
    if (alone) {
      std::unique_ptr<Sequence> owned = std::move(waiting_[pick]);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
      plan->failed.push_back(owned.get());
      running_.push_back(std::move(owned));  // Remove() will find it
      return false;
    }
    return false;
  }
  if (!s->cache_reported) kv_.ExplainMisses(&match, s->tokens);  // miss reasons of the first admission
  Status st = kv_.AllocateSequence(s->id, std::move(match), total, &s->block_table);
  if (!st.ok()) return false;
  s->allocated_tokens = total;
  std::unique_ptr<Sequence> owned = std::move(waiting_[pick]);
  waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
  if (!kv_.PromotionReady(s->id, &s->block_table)) {
    s->state = SeqState::kLoading;
    if (s->first_scheduled_s < 0) s->first_scheduled_s = now_s;
    loading_.push_back(std::move(owned));
    return true;
  }
  StartRunning(s, now_s);
  running_.push_back(std::move(owned));
  if (!budget) return true;  // shortest-first: the prefill pass gives it its chunk
  int64_t chunk = std::min(s->remaining_to_compute(), *budget);
  if (chunk > 0) {
    s->step_tokens = chunk;
    *budget -= chunk;
    plan->batch.push_back(s);
  }
  return true;
}

// One token for each decoding sequence; false when running_ changed (a
// preemption) and the caller must rescan. Speculation never preempts: without
// free blocks for a draft's positions the sequence decodes one token.
bool Scheduler::PlanDecode(Sequence* s, int64_t* budget, StepPlan* plan) {
  if (!s->draft.empty() &&
      !kv_.CanAppend(s->id, s->n_computed + 1 + static_cast<int64_t>(s->draft.size()) - s->allocated_tokens))
    s->draft.clear();
  const int64_t want = 1 + static_cast<int64_t>(s->draft.size());  // 1 + k verification positions
  const int64_t chunk = std::min(want, *budget);
  if (chunk < want) s->draft.resize(static_cast<size_t>(chunk - 1));  // a short budget shortens the draft
  return Take(s, chunk, budget, plan);
}

bool Scheduler::Take(Sequence* s, int64_t chunk, int64_t* budget, StepPlan* plan) {
  if (!EnsureBlocks(s, s->n_computed + chunk, plan)) return false;
  s->step_tokens = chunk;
  *budget -= chunk;
  plan->batch.push_back(s);
  return true;
}

// Running sequences that still prefill, in the order they get the budget:
// oldest first (FCFS), or under shortest_first the fewest tokens left first,
// except that one whose prefill started more than the fairness bound ago goes
// before the rest (in admission order), so a long prompt is never starved.
std::vector<Sequence*> Scheduler::PrefillOrder(double now_s, bool shortest_first) const {
  std::vector<Sequence*> order;
  for (const auto& s : running_)
    if (s->step_tokens == 0 && !s->decoding() && s->remaining_to_compute() > 0) order.push_back(s.get());
  if (!shortest_first) return order;
  auto overdue = [&](const Sequence* s) { return Overdue(s, now_s); };
  std::stable_sort(order.begin(), order.end(), [&](const Sequence* a, const Sequence* b) {
    if (overdue(a) != overdue(b)) return overdue(a);
    if (overdue(a)) return false;  // both overdue: admission order
    return a->remaining_to_compute() < b->remaining_to_compute();
  });
  return order;
}

bool Scheduler::Overdue(const Sequence* s, double now_s) const {
  return now_s - s->first_scheduled_s > config_.fairness_s;
}

// A step is shared when a long prefill would hold up someone else: a decode
// in it, another prefill, or a request whose blocks are loading (a waiting
// request that was not admitted cannot run before someone finishes).
bool Scheduler::Shared(const StepPlan& plan, size_t n_prefills) const {
  return !plan.batch.empty() || n_prefills > 1 || !loading_.empty();
}

// Chunks for the running prefills, in PrefillOrder. Under shortest_first a
// prefill with more than long_prefill_tokens left is long: while the step is
// shared, each long one advances at most prefill_slice_tokens, and none does
// in a step that finishes a shorter prefill, so a turn of a few hundred new
// tokens never waits behind a cold prompt's big chunks, while many long
// prompts together still fill the budget; alone, a long one advances at most
// long_prefill_tokens (a slice, if larger), so a request that arrives
// meanwhile waits for a step of that size, not of the whole budget (an
// overdue prefill takes what it can, as a short one does).
void Scheduler::PlanPrefills(double now_s, bool shortest_first, int64_t* budget, StepPlan* plan) {
  bool short_taken = false;
  for (bool rescan = true; rescan;) {
    rescan = false;
    const std::vector<Sequence*> order = PrefillOrder(now_s, shortest_first);
    const bool slicing = shortest_first && config_.prefill_slice_tokens > 0;
    const bool shared = slicing && Shared(*plan, order.size());
    for (Sequence* s : order) {
      if (*budget <= 0) break;
      int64_t chunk = std::min(s->remaining_to_compute(), *budget);
      const bool is_long = slicing && s->remaining_to_compute() > config_.long_prefill_tokens && !Overdue(s, now_s);
      if (is_long && shared && short_taken) continue;
      // Shared: a slice. Alone: at most the threshold (never less than a
      // slice), so that a request arriving during the step waits for no more
      // than that much work.
      if (is_long)
        chunk = std::min(chunk, shared ? config_.prefill_slice_tokens
                                       : std::max(config_.long_prefill_tokens, config_.prefill_slice_tokens));
      if (!Take(s, chunk, budget, plan)) {
        rescan = true;  // running_ changed: order again
        break;
      }
      short_taken = short_taken || !is_long;
    }
  }
}

std::string DescribeStep(const StepPlan& plan) {
  std::string out = fmt::format("{} tokens:", plan.n_tokens);
  for (const Sequence* s : plan.batch) out += fmt::format(" {}:{}@{}", s->id, s->step_tokens, s->n_computed);
  return out;
}

StepPlan Scheduler::Schedule(double now_s) {
  StepPlan plan;
  PromoteLoaded(now_s);
  int64_t budget = config_.max_batch_tokens;
  for (auto& s : running_) s->step_tokens = 0;

  // Decode first (one token each, or a draft's verification positions).
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence* s = running_[i].get();
    if (s->step_tokens > 0 || !s->decoding()) continue;
    if (!PlanDecode(s, &budget, &plan)) i = static_cast<size_t>(-1);  // running_ changed: rescan
  }
  // Then prefill chunks. The baseline policy continues the running prefills
  // oldest first and admits waiting requests with what is left. The optimized
  // policy admits first (a request that arrives during a long prefill does not
  // wait for it to end), then gives the budget shortest prompt first: a turn
  // with a few hundred new tokens runs in the next step instead of after a
  // cold prefill of thousands, which is what the agentic workload's tail TTFT
  // is made of (docs/benchmarks.md, "Scheduling knobs").
  const bool shortest_first = config_.policy == ServePolicy::kOptimized;
  if (shortest_first) {
    while (budget > 0 && Admit(now_s, nullptr, &plan)) {
    }
  }
  PlanPrefills(now_s, shortest_first, &budget, &plan);
  if (!shortest_first) {
    while (budget > 0 && Admit(now_s, &budget, &plan)) {
    }
  }
  for (Sequence* s : plan.batch) plan.n_tokens += s->step_tokens;
  return plan;
}

}  // namespace pg
