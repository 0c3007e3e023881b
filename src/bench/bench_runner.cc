#include "bench/bench_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "bench/prefix_reuse.h"

namespace pg::bench {
namespace {

class Runner {
 public:
  Runner(const Workload& w, const ClientOptions& c, const RunOptions& o)
      : workload_(w), client_opt_(c), opt_(o), ideal_(o.ideal_block_tokens) {}

  RunResult Run() {
    t_start_ = NowSeconds();
    std::thread progress;
    if (opt_.progress) progress = std::thread([this] { ProgressLoop(); });
    std::thread timer;
    if (opt_.duration_s > 0) {
      timer = std::thread([this] {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_until(lock, Deadline(opt_.duration_s), [this] { return stop_ || finished_; });
        stop_ = true;
        cv_.notify_all();
      });
    }
    if (opt_.open_loop) {
      OpenLoop();
    } else {
      std::vector<std::thread> workers;
      for (int32_t i = 0; i < opt_.concurrency; ++i) workers.emplace_back([this] { Worker(); });
      for (auto& t : workers) t.join();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
      stop_ = true;
    }
    cv_.notify_all();
    if (timer.joinable()) timer.join();
    if (progress.joinable()) progress.join();
    RunResult r;
    r.wall_s = NowSeconds() - t_start_;
    r.records = std::move(records_);
    std::sort(r.records.begin(), r.records.end(),
              [](const RequestRecord& a, const RequestRecord& b) { return a.index < b.index; });
    return r;
  }

 private:
  std::chrono::steady_clock::time_point Deadline(double seconds_from_start) const {
    double now = NowSeconds();
    double rel = std::max(0.0, t_start_ + seconds_from_start - now);
    return std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(std::min(rel, 1e7) * 1e6));
  }
  // Sleeps `seconds` unless stopped first; returns false when stopped.
  bool Sleep(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    if (seconds > 0) {
      auto until = std::chrono::steady_clock::now() +
                   std::chrono::microseconds(static_cast<int64_t>(std::min(seconds, 1e7) * 1e6));
      cv_.wait_until(lock, until, [this] { return stop_; });
    }
    return !stop_;
  }
  bool Stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  bool OnePassOnly() const { return opt_.duration_s <= 0 && opt_.max_requests <= 0; }
  // Next root session index, or -1 when none is left.
  int64_t NextSession() {
    int64_t k = next_session_.fetch_add(1);
    if ((OnePassOnly() || !workload_.Recyclable()) && k >= workload_.SessionsPerPass()) return -1;
    return k;
  }

  void Worker() {
    auto client = StreamClient::Create(client_opt_);
    if (!client.ok()) return;  // validated by RunBench before starting
    while (!Stopped()) {
      int64_t k = NextSession();
      if (k < 0) break;
      RunSession(**client, workload_.MakeSession(k));
    }
  }

  void OpenLoop() {
    std::vector<std::thread> threads;
    std::atomic<int32_t> inflight{0};
    while (!Stopped()) {
      int64_t k = NextSession();
      if (k < 0) break;
      SessionScript s = workload_.MakeSession(k);
      double at = s.events.empty() ? 0 : std::max(0.0, s.events[0].arrival_s);
      if (!Sleep(t_start_ + at - NowSeconds())) break;
      while (inflight.load() >= opt_.max_open_loop_inflight && !Stopped()) Sleep(0.005);
      ++inflight;
      threads.emplace_back([this, &inflight, s = std::move(s)]() mutable {
        auto client = StreamClient::Create(client_opt_);
        if (client.ok()) RunSession(**client, s);
        --inflight;
      });
    }
    for (auto& t : threads) t.join();
  }

  void RunSession(StreamClient& client, const SessionScript& s) {
    std::vector<std::thread> children;
    int32_t turn = 0;
    for (const SessionEvent& e : s.events) {
      if (!Sleep(e.wait_before_s)) break;
      if (e.kind == SessionEvent::Kind::kSpawn) {
        const SessionScript* child = &s.children[static_cast<size_t>(e.child)];
        children.emplace_back([this, child] {
          auto c = StreamClient::Create(client_opt_);
          if (c.ok()) RunSession(**c, *child);
        });
        continue;
      }
      int64_t index = issued_.fetch_add(1);
      if (opt_.max_requests > 0 && index >= opt_.warmup + opt_.max_requests) {
        Stop();
        break;
      }
      RequestRecord rec;
      rec.index = index;
      rec.session = s.label;
      rec.turn = turn++;
      rec.warmup = index < opt_.warmup;
      rec.max_tokens = e.max_tokens;
      rec.sent_prompt_tokens = static_cast<int64_t>(e.prompt.size());
      rec.ideal_cached_tokens = ideal_.Observe(e.prompt);
      rec.send_s = NowSeconds() - t_start_;
      client.Send(e.prompt, e.max_tokens, &rec);
      std::lock_guard<std::mutex> lock(mu_);
      if (!rec.warmup) {
        done_ += rec.ok;
        failed_ += !rec.ok;
        if (rec.ok) out_tokens_ += std::max<int64_t>(0, rec.output_tokens);
      }
      records_.push_back(std::move(rec));
    }
    for (auto& t : children) t.join();
  }

  void ProgressLoop() {
    while (true) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return finished_; });
      double el = NowSeconds() - t_start_;
      std::string eta = "?";
      int64_t finished = done_ + failed_;
      if (opt_.duration_s > 0) {
        eta = fmt::format("{:.0f}s", std::max(0.0, opt_.duration_s - el));
      } else if (opt_.max_requests > 0 && finished > 0) {
        eta = fmt::format("{:.0f}s",
                          el / static_cast<double>(finished) * static_cast<double>(opt_.max_requests - finished));
      }
      std::string target = opt_.max_requests > 0 ? fmt::format("/{}", opt_.max_requests) : "";
      std::fprintf(stderr, "\r[bench] %lld%s done, %lld failed, %.1f out tok/s, %.0fs elapsed, ETA %s   ",
                   static_cast<long long>(done_), target.c_str(), static_cast<long long>(failed_),
                   el > 0 ? static_cast<double>(out_tokens_) / el : 0.0, el, eta.c_str());
      std::fflush(stderr);
      if (finished_) {
        std::fprintf(stderr, "\n");
        return;
      }
    }
  }

  const Workload& workload_;
  const ClientOptions& client_opt_;
  const RunOptions& opt_;
  PrefixReuseTracker ideal_;
  double t_start_ = 0;
  std::atomic<int64_t> next_session_{0};
  std::atomic<int64_t> issued_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                               // guarded by mu_
  bool finished_ = false;                           // guarded by mu_
  std::vector<RequestRecord> records_;              // guarded by mu_
  int64_t done_ = 0, failed_ = 0, out_tokens_ = 0;  // guarded by mu_ (non-warmup)
};

}  // namespace

Result<RunResult> RunBench(const Workload& workload, const ClientOptions& client, const RunOptions& opt) {
  if (opt.concurrency < 1 || opt.concurrency > 4096) {
    return InvalidArgument(fmt::format("--concurrency {} must be in [1, 4096]", opt.concurrency));
  }
  if (opt.duration_s < 0) return InvalidArgument("--duration must be >= 0");
  if (opt.max_requests < 0) return InvalidArgument("--max-requests must be >= 0");
  if (opt.warmup < 0) return InvalidArgument("--warmup must be >= 0");
  if (opt.ideal_block_tokens < 1) return InvalidArgument("--ideal-block must be >= 1");
  if (workload.SessionsPerPass() < 1) return InvalidArgument("the workload has no sessions");
  PG_RETURN_IF_ERROR(StreamClient::Create(client).status());
  Runner runner(workload, client, opt);
  return runner.Run();
}

}  // namespace pg::bench
