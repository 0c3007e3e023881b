#include "server/core/generation_runner.h"

#include <condition_variable>
#include <deque>
#include <mutex>

#include "base/clock.h"
#include "metrics/metrics_registry.h"

namespace pg {

// Engine thread -> HTTP thread queue of one request's events.
struct EventChannel {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<ServiceEvent, double>> events;  // event, NowSeconds() when it arrived
};

GenerationRunner::GenerationRunner(InferenceService* service, GenerationRequest request, std::vector<std::string> stops,
                                   GenerationMetrics metrics)
    : service_(service),
      request_(std::move(request)),
      metrics_(metrics),
      channel_(std::make_shared<EventChannel>()),
      decoder_(service->tokenizer()),
      stop_filter_(std::move(stops)) {
  result_.prompt_tokens = static_cast<int64_t>(request_.prompt.size());
}

GenerationRunner::~GenerationRunner() {
  if (started_ && !finished_) Cancel();
}

Status GenerationRunner::Start() {
  std::shared_ptr<EventChannel> channel = channel_;
  Status st = service_->Submit(request_, [channel](const ServiceEvent& ev) {
    double now = NowSeconds();
    {
      std::lock_guard<std::mutex> lock(channel->mu);
      channel->events.emplace_back(ev, now);
    }
    channel->cv.notify_one();
  });
  if (st.ok()) started_ = true;
  return st;
}

void GenerationRunner::Cancel() {
  if (!started_ || finished_ || cancelled_) return;
  cancelled_ = true;
  service_->Cancel(request_.id);
}

bool GenerationRunner::Poll(double timeout_s, GenerationStep* step) {
  if (finished_) return true;
  std::deque<std::pair<ServiceEvent, double>> events;
  {
    std::unique_lock<std::mutex> lock(channel_->mu);
    channel_->cv.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return !channel_->events.empty(); });
    events.swap(channel_->events);
  }
  for (auto& [ev, at] : events) {
    if (finished_) break;
    if (ev.kind == ServiceEvent::Kind::kToken) {
      OnToken(ev, at, step);
    } else {
      OnFinish(ev.finish, at, step);
    }
  }
  return finished_;
}

void GenerationRunner::OnToken(const ServiceEvent& ev, double at_s, GenerationStep* step) {
  if (ev.has_cache) result_.cache = ev.cache;
  admitted_ = true;
  if (cancelled_) return;  // after a stop string or a disconnect nothing more is shown
  const TokenEvent& token = ev.token;
  if (metrics_.ttft_s && last_token_s_ == 0) metrics_.ttft_s->Observe(at_s - request_.arrival_s);
  if (metrics_.itl_s && last_token_s_ > 0) metrics_.itl_s->Observe(at_s - last_token_s_);
  last_token_s_ = at_s;
  ++tokens_seen_;
  const Tokenizer& tok = service_->tokenizer();
  if (!request_.sampling.ignore_eos && tok.IsEog(token.token)) return;
  step->tokens.push_back(token);
  step->text += stop_filter_.Push(Decode(token.token));
  if (stop_filter_.stopped()) {
    Stopped();
    Cancel();
  }
}

void GenerationRunner::Stopped() {
  result_.finish_reason = "stop";
  result_.stop_sequence = stop_filter_.matched();
  result_.completion_tokens = tokens_seen_;
}

std::string GenerationRunner::Decode(int32_t token) {
  for (int32_t id : render_special_) {
    if (id == token) return decoder_.Flush() + service_->tokenizer().TokenToPiece(token, /*render_special=*/true);
  }
  return decoder_.Push(token);
}

void GenerationRunner::OnFinish(const FinishEvent& finish, double at_s, GenerationStep* step) {
  finished_ = true;
  if (metrics_.e2e_s) metrics_.e2e_s->Observe(at_s - request_.arrival_s);
  if (metrics_.queue_s) metrics_.queue_s->Observe(finish.queue_s);
  result_.cache = finish.cache;
  result_.spec = finish.spec;
  if (finish.prompt_tokens > 0) result_.prompt_tokens = finish.prompt_tokens;
  if (stop_filter_.stopped()) return;  // finish_reason and counts were set at the stop
  if (!cancelled_) step->text += stop_filter_.Push(decoder_.Flush());
  if (!stop_filter_.stopped()) step->text += stop_filter_.Flush();
  if (stop_filter_.stopped()) return Stopped();
  result_.finish_reason = finish.finish_reason;
  result_.error = finish.error;
  result_.completion_tokens = finish.completion_tokens;
}

}  // namespace pg
