#include "testing/fake_inference_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "base/clock.h"
#include "base/locked_copy.h"
#include "base/stop_and_join.h"
#include "metrics/metric_set.h"

namespace pg {

namespace {
// Enough text for a few hundred merges of common English and JSON pieces.
constexpr const char* kTrainingCorpus =
    "Hello from the fake engine! Hello world. The quick brown fox jumps over the lazy dog. "
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call> "
    "user assistant system tool You are a helpful assistant. What is the weather in Paris? "
    "The weather in Paris is sunny. function arguments name city temperature sunny rain ";
}  // namespace

Result<std::unique_ptr<Tokenizer>> FakeInferenceService::MakeTestTokenizer() {
  std::vector<std::string> specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  PG_ASSIGN_OR_RETURN(BpeTrainResult trained, TrainByteLevelBpe(kTrainingCorpus, 512, specials));
  VocabData vocab = ToVocabData(trained);  // gpt2 / qwen2, no BOS added
  vocab.bos_id.reset();                    // no BOS token at all, and no add_eos flag
  vocab.add_eos.reset();
  int32_t n = static_cast<int32_t>(vocab.tokens.size());
  vocab.eos_id = n - 1;  // <|im_end|>
  vocab.eot_id = n - 1;
  vocab.pad_id = n - 3;  // <|endoftext|>
  return Tokenizer::FromVocab(vocab);
}

FakeInferenceService::FakeInferenceService(std::unique_ptr<Tokenizer> tokenizer, FakeServiceOptions options)
    : tokenizer_(std::move(tokenizer)), options_(std::move(options)), ready_(options_.ready) {
  info_.model_name = options_.model_name;
  info_.n_vocab = tokenizer_->n_vocab();
  info_.n_ctx = options_.n_ctx;
  info_.honours_cache_ttl = true;  // as under --policy optimized
  info_.chat_template = options_.chat_template;
  if (tokenizer_->eos_id() >= 0) info_.eos_token = tokenizer_->TokenText(tokenizer_->eos_id());
  if (tokenizer_->bos_id() >= 0) info_.bos_token = tokenizer_->TokenText(tokenizer_->bos_id());
  thread_ = std::thread([this] { Loop(); });
}

FakeInferenceService::~FakeInferenceService() { StopAndJoin(mu_, &stop_, {&cv_}, {&thread_}); }

Status FakeInferenceService::Submit(GenerationRequest request, EventCallback on_event) {
  if (request.prompt.empty()) return InvalidArgument("empty prompt");
  if (static_cast<int64_t>(request.prompt.size()) + request.sampling.max_tokens > options_.n_ctx) {
    return InvalidArgument(fmt::format("prompt of {} tokens + {} completion tokens exceeds the context of {}",
                                       request.prompt.size(), request.sampling.max_tokens, options_.n_ctx));
  }
  for (int32_t t : request.prompt) {
    if (!tokenizer_->IsValid(t)) return InvalidArgument(fmt::format("token id {} out of range", t));
  }
  auto a = std::make_shared<Active>();
  std::string reply = options_.reply_fn ? options_.reply_fn(request) : options_.reply;
  a->reply = tokenizer_->Encode(reply, /*add_special=*/false, /*parse_special=*/true);
  a->request = std::move(request);
  a->on_event = std::move(on_event);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int64_t>(queued_.size()) >= options_.max_queue) {
      return ResourceExhausted(fmt::format("queue full ({} waiting)", queued_.size()));
    }
    a->cached = CachedPrefix(a->request.prompt);
    last_request_ = a->request;
    queued_.push_back(std::move(a));
  }
  cv_.notify_all();
  return Status::Ok();
}

int64_t FakeInferenceService::CachedPrefix(const std::vector<int32_t>& prompt) {
  size_t best = 0;
  for (const auto& p : seen_prompts_) {
    size_t n = 0;
    while (n < p.size() && n < prompt.size() && p[n] == prompt[n]) ++n;
    best = std::max(best, n);
  }
  // Like a real engine: at least the last prompt token is recomputed.
  if (best >= prompt.size()) best = prompt.size() - 1;
  seen_prompts_.push_back(prompt);
  return static_cast<int64_t>(best);
}

void FakeInferenceService::Cancel(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_requests_.insert(request_id);
  }
  cv_.notify_all();
}

void FakeInferenceService::ReleaseSession(const std::string& session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  released_sessions_.push_back(session_id);
}

void FakeInferenceService::NoteToolCall(const std::string& session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  tool_call_sessions_.push_back(session_id);
}

std::vector<std::string> FakeInferenceService::tool_call_sessions() const {
  return LockedCopy(mu_, tool_call_sessions_);
}

std::vector<std::string> FakeInferenceService::released_sessions() const { return LockedCopy(mu_, released_sessions_); }

GenerationRequest FakeInferenceService::last_request() const { return LockedCopy(mu_, last_request_); }

int64_t FakeInferenceService::running_count() const { return LockedCopy(mu_, running_); }

std::string FakeInferenceService::MetricsText() const {
  std::lock_guard<std::mutex> lock(mu_);
  MetricSet m;
  m.Gauge("prosgrow_fake_running_sequences", "Sequences being generated.", running_);
  m.Gauge("prosgrow_fake_queued_requests", "Requests waiting.", queued_.size());
  m.Counter("prosgrow_fake_cancelled_total", "Requests cancelled (KV freed).", cancelled_total_.load());
  return m.Render();
}

void FakeInferenceService::Loop() {
  std::vector<std::shared_ptr<Active>> running;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queued_.empty() || !running.empty(); });
      if (stop_) break;
      while (!queued_.empty() && static_cast<int>(running.size()) < options_.max_running) {
        running.push_back(std::move(queued_.front()));
        queued_.pop_front();
        running.back()->first_scheduled_s = NowSeconds();
      }
      // Cancellation of queued requests: they never start.
      for (auto it = queued_.begin(); it != queued_.end();) {
        if (cancel_requests_.erase((*it)->request.id)) {
          (*it)->cancelled = true;
          running.push_back(*it);  // finished below, in order
          it = queued_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto& a : running) {
        if (cancel_requests_.erase(a->request.id)) a->cancelled = true;
      }
      cancel_requests_.clear();  // the rest name requests that already finished
      running_ = static_cast<int64_t>(running.size());
    }
    Step(&running);
    if (options_.token_delay_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.token_delay_s));
    }
  }
  // Shutting down: whatever is left ends as cancelled.
  double now = NowSeconds();
  for (auto& a : running) Finish(a.get(), "cancelled", now);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& a : queued_) Finish(a.get(), "cancelled", now);
}

void FakeInferenceService::Step(std::vector<std::shared_ptr<Active>>* running) {
  double now = NowSeconds();
  std::vector<std::shared_ptr<Active>> still;
  for (auto& a : *running) {
    if (a->cancelled) {
      cancelled_total_.fetch_add(1);
      Finish(a.get(), "cancelled", now);
      continue;
    }
    const SamplingParams& s = a->request.sampling;
    int64_t n = static_cast<int64_t>(a->reply.size());
    int32_t token;
    if (a->produced < n) {
      token = a->reply[a->produced];
    } else if (s.ignore_eos && n > 0) {
      token = a->reply[a->produced % n];
    } else {
      token = tokenizer_->eos_id();
    }
    ServiceEvent ev;
    ev.kind = ServiceEvent::Kind::kToken;
    ev.token.token = token;
    ev.token.logprob = -0.125f * static_cast<float>(1 + a->produced % 4);
    for (int k = 0; k < s.top_logprobs; ++k) {
      int32_t alt = k == 0 ? token : static_cast<int32_t>((token + k) % tokenizer_->n_vocab());
      ev.token.top.emplace_back(alt, ev.token.logprob - static_cast<float>(k));
    }
    if (a->first_token_s == 0) {
      a->first_token_s = now;
      ev.has_cache = true;
      ev.cache = CacheOf(*a);
    }
    a->on_event(ev);
    a->produced += 1;
    bool eos = !s.ignore_eos && tokenizer_->IsEog(token);
    if (eos) {
      Finish(a.get(), "stop", now);
    } else if (a->produced >= s.max_tokens) {
      Finish(a.get(), "length", now);
    } else {
      still.push_back(a);
    }
  }
  running->swap(still);
  std::lock_guard<std::mutex> lock(mu_);
  running_ = static_cast<int64_t>(running->size());
}

CacheUsage FakeInferenceService::CacheOf(const Active& a) const {
  CacheUsage c;
  int total_w = options_.device_weight + options_.host_weight + options_.disk_weight;
  if (total_w > 0) {
    c[kHostTier] = a.cached * options_.host_weight / total_w;
    c[kDiskTier] = a.cached * options_.disk_weight / total_w;
    c[kDeviceTier] = a.cached - c[kHostTier] - c[kDiskTier];
    c.cached_tokens = a.cached;
  }
  // The fake keeps no cache history: every uncached prompt token is a first sight.
  c.miss.never_seen = static_cast<int64_t>(a.request.prompt.size()) - c.cached_tokens;
  return c;
}

void FakeInferenceService::Finish(Active* a, const std::string& reason, double now) {
  ServiceEvent ev;
  ev.kind = ServiceEvent::Kind::kFinish;
  FinishEvent& f = ev.finish;
  f.finish_reason = reason;
  f.prompt_tokens = static_cast<int64_t>(a->request.prompt.size());
  f.completion_tokens = a->produced;
  f.cache = CacheOf(*a);
  f.queue_s = a->first_scheduled_s > 0 ? a->first_scheduled_s - a->request.arrival_s : now - a->request.arrival_s;
  f.ttft_s = a->first_token_s > 0 ? a->first_token_s - a->request.arrival_s : 0;
  finished_total_.fetch_add(1);
  a->on_event(ev);
}

}  // namespace pg
