#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "engine/backend.h"
#include "engine/kv_cache_setup.h"
#include "engine/request_admission.h"
#include "kv/index/block_hash.h"
#include "kvevents/kv_event.h"

namespace pg {

Result<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config) {
  std::unique_ptr<Engine> e(new Engine(config));
  EngineConfig& c = e->config_;
  if (c.max_batch_tokens < 1) return InvalidArgument("--max-batch-tokens must be >= 1");
  if (c.max_seqs < 1) return InvalidArgument("--max-seqs must be >= 1");
  if (c.prefill_slice_tokens < 0) return InvalidArgument("--prefill-slice must be >= 0");
  if (c.long_prefill_tokens < 1) return InvalidArgument("--long-prefill-threshold must be >= 1");
  if (c.page_tokens < 1 || c.page_tokens > 1024) return InvalidArgument("page size must be in [1, 1024] tokens");
  ModelOptions options = ModelOptionsFor(c.attention);
  options.sparse_attention = c.sparse_attention;
  if (c.model_file) {
    PG_ASSIGN_OR_RETURN(e->model_, Model::Load(c.model_file, options));
    c.model_file.reset();  // the model holds it now
  } else {
    PG_ASSIGN_OR_RETURN(e->model_, Model::Load(c.model_path, options));
  }
  PG_ASSIGN_OR_RETURN(e->tokenizer_, e->model_->source().LoadTokenizer());
  const ModelConfig& mc = e->model_->config();
  if (c.ctx_size <= 0) c.ctx_size = std::min<int64_t>(mc.n_ctx_train, 8192);
  if (c.ctx_size < 2) return InvalidArgument("--ctx-size must be >= 2");
  e->pool_ = std::make_unique<ThreadPool>(c.threads);
  if (!c.backend) c.backend = DefaultCpuBackend();
  PG_ASSIGN_OR_RETURN(e->executor_, c.backend->MakeExecutor(*e->model_, *e->pool_));

  const KvLayout layout = KvLayoutOf(mc, c);
  PG_RETURN_IF_ERROR(layout.Validate());
  // --spec draft: the draft model's KV takes its share of the device budget first.
  if (c.spec.enabled()) PG_RETURN_IF_ERROR(e->CreateSpeculation(layout));
  PG_RETURN_IF_ERROR(e->CreateKvCache(layout));
  e->scheduler_ = std::make_unique<Scheduler>(e->config_, *e->kv_);
  e->FillInfo();
  PG_LOG_INFO("engine: {}; policy {}; KV {} device blocks of {} tokens ({})", mc.Summary(),
              c.policy == ServePolicy::kBaseline ? "baseline" : "optimized", e->kv_->device_blocks(), c.page_tokens,
              e->kv_->layout().ToString());
  return e;
}

void Engine::FillInfo() {
  const EngineConfig& c = config_;
  const ModelConfig& mc = model_->config();
  info_.model_name = c.model_name.empty() ? ServedModelName(c.model_path) : c.model_name;
  info_.n_vocab = mc.n_vocab;
  info_.n_ctx = c.ctx_size;
  info_.sampling_defaults = model_->source().sampling_defaults();
  info_.honours_cache_ttl = c.policy == ServePolicy::kOptimized;
  // A sequence alone may use every device block (the scheduler evicts cached
  // ones for it); holding prompt + max_tokens - 1 positions it never needs more.
  info_.max_seq_tokens = kv_->device_blocks() * kv_->page_tokens();
  if (spec_) spec_->set_max_seq_tokens(info_.max_seq_tokens);
  info_.chat_template = model_->source().chat_template();
  const Tokenizer& t = *tokenizer_;
  if (t.bos_id() >= 0) info_.bos_token = t.TokenText(t.bos_id());
  if (t.eos_id() >= 0) info_.eos_token = t.TokenText(t.eos_id());
}

Engine::~Engine() { Stop(); }

Status Engine::Submit(GenerationRequest request, EventCallback on_event) {
  PG_RETURN_IF_ERROR(CheckAdmissible(request, info_));
  const int64_t n = static_cast<int64_t>(request.prompt.size());
  auto seq = std::make_unique<Sequence>();
  seq->request = std::move(request);
  seq->on_event = std::move(on_event);
  seq->sampler = std::make_unique<Sampler>(seq->request.sampling, seq->request.prompt);
  if (seq->request.sampling.min_tokens > 0) seq->sampler->HoldBackUntilMinTokens(EndTokens(seq->request.sampling));
  if (spec_) seq->spec = spec_->NewSequence(seq->request.sampling.seed ^ std::hash<std::string>{}(seq->request.id));
  // A seeded request's draft-model acceptance draws depend on its seed alone (reproducible).
  if (spec_ && seq->request.sampling.has_seed) seq->spec->rng.seed(seq->request.sampling.seed ^ 0x9e3779b97f4a7c15ull);
  if (seq->request.constraint) seq->constraint = std::make_unique<ConstraintMatcher>(seq->request.constraint);
  seq->tokens = seq->request.prompt;
  seq->n_prompt = n;
  seq->arrival_s = seq->request.arrival_s > 0 ? seq->request.arrival_s : NowSeconds();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (queued_ >= config_.max_queue) return ResourceExhausted("the request queue is full; retry later");
    ++queued_;
    incoming_.push_back(std::move(seq));
  }
  cv_.notify_one();
  return Status::Ok();
}

void Engine::Cancel(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    cancels_.push_back(request_id);
  }
  cv_.notify_one();
}

std::vector<uint64_t> Engine::PromptBlockHashes(const std::vector<int32_t>& prompt, const std::string& salt) const {
  const size_t page = static_cast<size_t>(kv_->page_tokens());
  std::vector<uint64_t> out;
  // The same root the KV cache (and so its events) use: the executor-qualified identity.
  // Under the same fleet secret, too: these are the names the events use.
  const BlockHashKey key(config_.kv_hash_secret);
  BlockHash h = RootHash(KvModelIdentity(model_->identity(), *executor_), salt, key);
  for (size_t at = 0; at + page <= prompt.size(); at += page) {
    h = ChainHash(h, std::span<const int32_t>(prompt.data() + at, page), key);
    out.push_back(EventHashOf(h.bytes.data()));
  }
  return out;
}

void Engine::ReleaseSession(const std::string& session_id) {
  std::lock_guard<std::mutex> lk(mu_);
  session_notes_.push_back({SessionNote::Kind::kRelease, session_id});
}

void Engine::NoteToolCall(const std::string& session_id) {
  if (config_.policy != ServePolicy::kOptimized || session_id.empty()) return;
  std::lock_guard<std::mutex> lk(mu_);
  session_notes_.push_back({SessionNote::Kind::kRetain, session_id, config_.session_ttl_s});
}

void Engine::AcceptIncoming() {
  std::vector<std::unique_ptr<Sequence>> incoming;
  std::vector<std::string> cancels;
  std::vector<SessionNote> notes;
  {
    std::lock_guard<std::mutex> lk(mu_);
    incoming.swap(incoming_);
    cancels.swap(cancels_);
    notes.swap(session_notes_);
  }
  for (const SessionNote& n : notes) {
    if (n.kind == SessionNote::Kind::kRelease)
      kv_->ReleaseSession(n.session);
    else
      kv_->HoldSession(n.session, n.ttl_s);
  }
  for (auto& s : incoming) {
    s->id = next_seq_id_++;
    if (config_.policy == ServePolicy::kOptimized && !s->request.session_id.empty() && s->request.cache_ttl_s >= 0)
      kv_->HoldSession(s->request.session_id, s->request.cache_ttl_s);
    ApplyKvHints(*s, /*finished=*/false);
    scheduler_->AddWaiting(std::move(s));
  }
  for (const std::string& id : cancels)
    if (Sequence* s = scheduler_->Find(id)) Finish(s, "cancelled");
}

Status Engine::RunForward(const StepPlan& plan) {
  batch_.clear();
  for (Sequence* s : plan.batch) {
    BatchSeq b;
    b.tokens = s->tokens.data() + s->n_computed;
    b.n_tokens = s->step_tokens;
    b.start_pos = s->n_computed;
    b.block_table = s->block_table.data();
    b.n_blocks = static_cast<int64_t>(s->block_table.size());
    b.want_logits = s->step_reaches_end();
    if (!s->draft.empty()) spec_->Verify(s, &b);  // its k + 1 verification positions
    batch_.push_back(b);
  }
  const double start = NowSeconds();
  PG_ASSIGN_OR_RETURN(logits_, executor_->Forward(batch_));
  const double took = NowSeconds() - start;
  if (spec_) spec_->Observe(plan.batch, batch_, logits_.hidden);  // --spec mtp reads the trunk's hidden rows
  step_cost_.Observe(ShapeOf(batch_), took);
  // PROSGROW_LOG=debug: one line a step (scripts/step_spans.py reads them).
  if (CurrentLogLevel() <= LogLevel::kDebug)
    PG_LOG_DEBUG("step at {:.4f} s took {:.4f} s, {}", start, took, DescribeStep(plan));
  return Status::Ok();
}

void Engine::SampleAndAdvance(const StepPlan& plan) {
  const int64_t V = logits_.n_vocab;
  const auto emit = [this](Sequence* s, int32_t token, ServiceEvent& ev) { return Emit(s, token, ev); };
  int64_t row = 0;
  done_.clear();
  for (size_t i = 0; i < plan.batch.size(); ++i) {
    Sequence* s = plan.batch[i];
    const float* rows = logits_.row(row);
    row += batch_[i].logit_rows();
    if (!s->draft.empty()) {
      // K/V is valid for positions [0, old n_computed + emitted): each emitted
      // token but the last was the input of the next verified position.
      s->n_computed += spec_->Accept(s, rows, V, emit);
      CommitComputed(s, /*release_tail=*/true);
      continue;
    }
    s->n_computed += s->step_tokens;
    CommitComputed(s, /*release_tail=*/false);
    if (!batch_[i].want_logits) continue;
    ServiceEvent ev;
    ev.kind = ServiceEvent::Kind::kToken;
    const int32_t token = s->sampler->Sample(rows, V, &ev.token, s->constraint.get());
    Emit(s, token, ev);
  }
  for (Sequence* s : done_) {
    bool eos = EndsOnLastToken(*s);
    // A constrained output ends "stop" only when it is whole; at a dead end
    // (no token could continue the grammar) it was cut short: "length".
    if (s->constraint && s->constraint->finished()) eos = s->constraint->complete();
    Finish(s, eos ? "stop" : "length");
  }
}

bool Engine::Emit(Sequence* s, int32_t token, ServiceEvent& ev) {
  if (s->first_token_s < 0) {
    s->first_token_s = NowSeconds();
    ev.has_cache = true;  // the first token carries the prompt's cache split
    ev.cache = s->cache;
  }
  s->tokens.push_back(token);
  s->n_generated++;
  totals_.generated_tokens++;
  if (s->on_event) s->on_event(ev);
  const bool stop = ShouldStop(*s);
  if (stop) done_.push_back(s);
  return stop;
}

bool Engine::EndsOnLastToken(const Sequence& s) const {
  const SamplingParams& p = s.request.sampling;
  if (s.n_generated < p.min_tokens || s.tokens.empty()) return false;
  const int32_t tok = s.tokens.back();
  if (!p.ignore_eos && tokenizer_->IsEog(tok)) return true;
  return std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), tok) != p.stop_token_ids.end();
}

std::vector<int32_t> Engine::EndTokens(const SamplingParams& p) const {
  std::vector<int32_t> out = p.stop_token_ids;
  if (!p.ignore_eos)
    for (int32_t id = 0; id < tokenizer_->n_vocab(); ++id)
      if (tokenizer_->IsEog(id)) out.push_back(id);
  return out;
}

bool Engine::ShouldStop(const Sequence& s) const {
  if (EndsOnLastToken(s)) return true;
  if (s.constraint && s.constraint->finished()) return true;
  return s.n_generated >= s.request.sampling.max_tokens || static_cast<int64_t>(s.tokens.size()) >= config_.ctx_size;
}

void Engine::CommitComputed(Sequence* s, bool release_tail) {
  const int page = kv_->page_tokens();
  while ((s->n_committed_blocks + 1) * page <= s->n_computed) {
    const int64_t b = s->n_committed_blocks;
    kv_->CommitFullBlock(s->id, static_cast<int>(b),
                         std::span<const int32_t>(s->tokens.data() + b * page, static_cast<size_t>(page)));
    s->n_committed_blocks++;
  }
  if (!release_tail) return;
  // A verification's rejected tail: its positions past n_computed go back.
  const Status st = kv_->TruncateSequence(s->id, s->n_computed, &s->block_table);
  PG_CHECK_MSG(st.ok(), st.ToString().c_str());
  s->allocated_tokens = s->n_computed;
}

void Engine::Finish(Sequence* seq, const std::string& reason, const std::string& error) {
  std::unique_ptr<Sequence> s = scheduler_->Remove(seq);
  if (!s) return;
  ApplyKvHints(*s, /*finished=*/true);
  {
    std::lock_guard<std::mutex> lk(mu_);
    --queued_;
  }
  ServiceEvent ev;
  ev.kind = ServiceEvent::Kind::kFinish;
  FinishEvent& f = ev.finish;
  f.finish_reason = reason;
  f.error = error;
  f.prompt_tokens = s->n_prompt;
  f.completion_tokens = s->n_generated;
  f.cache = s->cache;
  f.queue_s = s->first_scheduled_s >= 0 ? s->first_scheduled_s - s->arrival_s : 0;
  f.ttft_s = s->first_token_s >= 0 ? s->first_token_s - s->arrival_s : 0;
  f.spec = s->spec_usage;
  f.spec.synthetic = config_.spec.synthetic();
  if (spec_) spec_->Finished(*s);
  totals_.finished++;
  totals_.prompt_tokens += s->n_prompt;
  totals_.cached_tokens += s->cache.cached_tokens;
  totals_.cached_by_tier += s->cache;
  // Handed out by DeliverFinished(), after /metrics shows the freed KV.
  if (s->on_event) finished_events_.emplace_back(std::move(s->on_event), std::move(ev));
}

void Engine::DeliverFinished() {
  if (finished_events_.empty()) return;
  // Remove() freed the KV of every finished sequence: publish that (and the
  // finished counts) first, so a client that has its answer never sees its
  // request still holding KV, running or unfinished on /metrics.
  PublishSnapshot();
  for (auto& [callback, ev] : finished_events_) callback(ev);
  finished_events_.clear();
}

void Engine::Step() {
  AcceptIncoming();
  DeliverFinished();  // cancelled sequences
  kv_->Tick();
  if (spec_) spec_->Propose(scheduler_->running(), scheduler_->n_waiting(), *pool_, step_cost_);
  StepPlan plan = scheduler_->Schedule(NowSeconds());
  if (spec_) spec_->Plan(&plan, step_cost_, kv_.get());
  // Unreachable for a request Submit accepted (it fits the device tier
  // alone); kept so a broken invariant ends one request, not the server.
  for (Sequence* s : plan.failed)
    Finish(s, "error",
           fmt::format("the request needs more KV memory than the device tier holds ({} tokens, at "
                       "most {} for one sequence)",
                       s->tokens.size(), info_.max_seq_tokens));
  if (!plan.empty()) {
    Status st = RunForward(plan);
    if (!st.ok()) {
      PG_LOG_ERROR("forward failed: {}", st.ToString());
      for (Sequence* s : plan.batch) Finish(s, "error", st.message());
    } else {
      SampleAndAdvance(plan);
    }
  }
  DeliverFinished();
  PublishMetrics(plan);
  if (kv_events_) kv_events_->Flush();
}

void Engine::PublishMetrics(const StepPlan& plan) {
  totals_.steps++;
  totals_.batch_tokens = plan.n_tokens;
  PublishSnapshot();
}

void Engine::PublishSnapshot() {
  totals_.waiting = static_cast<int64_t>(scheduler_->n_waiting());
  totals_.running = static_cast<int64_t>(scheduler_->n_running());
  totals_.loading = static_cast<int64_t>(scheduler_->n_loading());
  totals_.preemptions = scheduler_->preemptions();
  totals_.kv = kv_->counters();
  totals_.hints = kv_->hint_counters();
  if (spec_) totals_.spec = spec_->counters();
  totals_.step_cost = step_cost_;
  std::lock_guard<std::mutex> lk(metrics_mu_);
  snap_ = totals_;
}

CacheCounters Engine::cache_counters() const { return kv_->counters(); }

void Engine::RunUntilIdle() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (incoming_.empty() && cancels_.empty() && scheduler_->idle()) return;
    }
    Step();
  }
}

Status Engine::FlushCache() { return kv_->Flush(); }

void Engine::Loop() {
  [[maybe_unused]] bool kv_checked = false;  // debug builds: CheckIntegrity ran since the last work
  while (!stop_.load()) {
    [[maybe_unused]] bool idle = false;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (incoming_.empty() && cancels_.empty() && session_notes_.empty() && scheduler_->idle()) {
        idle = true;
        cv_.wait_for(lk, std::chrono::milliseconds(50));
      }
    }
    if (stop_.load()) break;
#ifndef NDEBUG
    if (idle && !kv_checked) {  // once per idle spell, on the thread that owns the KV structures
      const Status st = kv_->CheckIntegrity();
      PG_CHECK_MSG(st.ok(), st.ToString().c_str());
    }
    kv_checked = idle;
#endif
    Step();
    // Sequences only waiting for promotions: don't spin the CPU.
    if (scheduler_->n_running() == 0 && scheduler_->n_loading() > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    // Requests only waiting for their remote-tier lookups: likewise.
    if (scheduler_->n_running() == 0 && scheduler_->n_loading() == 0 && kv_->remote_lookups_pending() > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void Engine::Start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { Loop(); });
}

void Engine::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  cv_.notify_all();
  thread_.join();
}

std::string Engine::MetricsText() const {
  EngineSnapshot s;
  {
    std::lock_guard<std::mutex> lk(metrics_mu_);
    s = snap_;
  }
  MetricSet m;
  CollectEngineMetrics(s, &m);
  CollectKvLayoutMetrics(kv_->layout(), &m);
  if (kv_events_) kv_events_->CollectMetrics(&m);
  CollectHintMetrics(s.hints, &m);
  if (spec_) SpeculativeDecoder::CollectMetrics(config_.spec, s.spec, &m);
  CollectStepCostMetrics(s.step_cost, &m);
  if (draft_model()) SpeculativeDecoder::CollectDraftModelMetrics(s.spec, &m);
  s.kv.CollectWhatIfMetrics(&m);
  CollectRemoteMetrics(s.kv.remote, &m);
  return m.Render();
}

}  // namespace pg
