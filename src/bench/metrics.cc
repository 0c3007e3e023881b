#include "bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pg::bench {

std::optional<double> Percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

std::optional<double> RequestInteractivity(const RequestRecord& r) {
  if (r.itl_s.empty()) return std::nullopt;
  double sum = 0;
  for (double g : r.itl_s) sum += g;
  double mean = sum / static_cast<double>(r.itl_s.size());
  if (!(mean > 0)) return std::nullopt;
  return 1.0 / mean;
}

namespace {

// What Summarize gathers over the completed (not warm-up) requests.
struct Totals {
  std::vector<double> ttft, e2e, inter, norm;
  double start = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  int64_t cached_sum = 0, cached_prompt = 0, cached_known = 0;
  int64_t tier[3] = {0, 0, 0};  // device, host, disk
  int64_t tier_prompt = 0, tier_known = 0;
  int64_t ideal_sum = 0, sent_sum = 0;
  bool from_usage = false, from_timings = false;
};

// One completed request into t, and its tokens into s.
void Accumulate(const RequestRecord& r, Totals& t, Summary& s) {
  t.start = std::min(t.start, r.send_s);
  t.end = std::max(t.end, r.send_s + r.e2e_s);
  int64_t prompt = r.prompt_tokens >= 0 ? r.prompt_tokens : r.sent_prompt_tokens;
  s.prompt_tokens += prompt;
  s.output_tokens += std::max<int64_t>(0, r.output_tokens);
  t.ideal_sum += r.ideal_cached_tokens;
  t.sent_sum += r.sent_prompt_tokens;
  if (r.ttft_s >= 0) t.ttft.push_back(r.ttft_s);
  t.e2e.push_back(r.e2e_s);
  if (auto i = RequestInteractivity(r)) t.inter.push_back(*i);
  if (r.output_tokens > 0) t.norm.push_back(r.e2e_s / static_cast<double>(r.output_tokens));
  if (r.cached_tokens >= 0) {
    ++t.cached_known;
    t.cached_sum += r.cached_tokens;
    t.cached_prompt += prompt;
    t.from_usage |= r.cached_source == "usage";
    t.from_timings |= r.cached_source == "timings";
  }
  if (r.cached_device >= 0 || r.cached_host >= 0 || r.cached_disk >= 0) {
    ++t.tier_known;
    t.tier[0] += std::max<int64_t>(0, r.cached_device);
    t.tier[1] += std::max<int64_t>(0, r.cached_host);
    t.tier[2] += std::max<int64_t>(0, r.cached_disk);
    t.tier_prompt += prompt;
  }
}

// Throughput over the window and the latency percentiles.
void SetRatesAndLatencies(const Totals& t, const SummaryInputs& in, Summary& s) {
  if (s.completed > 0) {
    s.window_s = t.end - t.start;
    if (s.window_s > 0) {
      s.output_tok_s = static_cast<double>(s.output_tokens) / s.window_s;
      if (in.gpus > 0) s.output_tok_s_gpu = *s.output_tok_s / in.gpus;
    }
  }
  s.ttft_p50 = Percentile(t.ttft, 0.5);
  s.ttft_p90 = Percentile(t.ttft, 0.9);
  s.ttft_p99 = Percentile(t.ttft, 0.99);
  s.e2e_p50 = Percentile(t.e2e, 0.5);
  s.e2e_p90 = Percentile(t.e2e, 0.9);
  s.interactivity_p50 = Percentile(t.inter, 0.5);
  if (auto p = Percentile(t.norm, 0.9); p && *p > 0) s.p90_e2e_norm_interactivity = 1.0 / *p;
}

// Cache reuse (from the responses when every one reported it, else from
// /metrics), per-tier fractions and reuse against the ideal.
void SetCacheReuse(const Totals& t, const SummaryInputs& in, Summary& s) {
  if (s.completed > 0 && t.cached_known == s.completed && t.cached_prompt > 0) {
    s.cache_reuse = static_cast<double>(t.cached_sum) / static_cast<double>(t.cached_prompt);
    s.cache_reuse_source = t.from_usage && t.from_timings ? "mixed" : t.from_usage ? "usage" : "timings";
  } else if (in.metrics_cached_delta && s.prompt_tokens > 0) {
    s.cache_reuse = *in.metrics_cached_delta / static_cast<double>(s.prompt_tokens);
    s.cache_reuse_source = "metrics";
  }
  if (t.tier_known == s.completed && t.tier_prompt > 0) {
    s.tier_device = static_cast<double>(t.tier[0]) / static_cast<double>(t.tier_prompt);
    s.tier_host = static_cast<double>(t.tier[1]) / static_cast<double>(t.tier_prompt);
    s.tier_disk = static_cast<double>(t.tier[2]) / static_cast<double>(t.tier_prompt);
  }
  if (t.sent_sum > 0) s.ideal_reuse = static_cast<double>(t.ideal_sum) / static_cast<double>(t.sent_sum);
  if (s.cache_reuse && s.ideal_reuse && *s.ideal_reuse > 0) s.reuse_of_ideal = *s.cache_reuse / *s.ideal_reuse;
}

}  // namespace

// The failure-inclusive throughput and p90 TTFT (Summary::output_tok_s_all,
// ttft_p90_all) over every non-warmup request.
void SummarizeWithFailed(const std::vector<RequestRecord>& records, Summary& s) {
  double start = std::numeric_limits<double>::infinity(), end = -start;
  int64_t tokens = 0;
  std::vector<double> ttft;
  for (const RequestRecord& r : records) {
    if (r.warmup) continue;
    start = std::min(start, r.send_s);
    end = std::max(end, r.send_s + r.e2e_s);
    tokens += std::max<int64_t>(0, r.output_tokens);
    if (r.ttft_s >= 0) ttft.push_back(r.ttft_s);
  }
  if (end > start) s.output_tok_s_all = static_cast<double>(tokens) / (end - start);
  s.ttft_p90_all = Percentile(ttft, 0.9);
}

Summary Summarize(const std::vector<RequestRecord>& records, const SummaryInputs& in) {
  Summary s;
  s.label = in.label;
  s.workload = in.workload;
  s.concurrency = in.concurrency;
  s.gpus = in.gpus;
  s.gpu_hour_cost = in.gpu_hour_cost;
  Totals t;
  for (const RequestRecord& r : records) {
    if (r.warmup) {
      ++s.warmup;
      continue;
    }
    if (!r.ok) {
      ++s.failed;
      continue;
    }
    ++s.completed;
    Accumulate(r, t, s);
  }
  SetRatesAndLatencies(t, in, s);
  SummarizeWithFailed(records, s);
  SetCacheReuse(t, in, s);
  if (in.gpu_hour_cost > 0 && s.output_tok_s_gpu && *s.output_tok_s_gpu > 0) {
    s.cost_per_mtok = in.gpu_hour_cost / (*s.output_tok_s_gpu * 3600.0 / 1e6);
  }
  s.spec = SummarizeSpec(records, in.spec_by_drafter);
  return s;
}

namespace {
// The counts and the optional figures of a Summary by their JSON keys (an
// optional one is null in the JSON when unknown): one list for
// SummaryToJson and SummaryFromJson.
template <typename T>
struct Field {
  const char* key;
  T Summary::*field;
};
constexpr Field<int64_t> kCountFields[] = {
    {"completed", &Summary::completed},
    {"failed", &Summary::failed},
    {"warmup", &Summary::warmup},
    {"prompt_tokens", &Summary::prompt_tokens},
    {"output_tokens", &Summary::output_tokens},
};
constexpr Field<std::optional<double>> kOptFields[] = {
    {"output_tok_s", &Summary::output_tok_s},
    {"output_tok_s_gpu", &Summary::output_tok_s_gpu},
    {"ttft_p50", &Summary::ttft_p50},
    {"ttft_p90", &Summary::ttft_p90},
    {"ttft_p99", &Summary::ttft_p99},
    {"e2e_p50", &Summary::e2e_p50},
    {"e2e_p90", &Summary::e2e_p90},
    {"interactivity_p50", &Summary::interactivity_p50},
    {"p90_e2e_norm_interactivity", &Summary::p90_e2e_norm_interactivity},
    {"cache_reuse", &Summary::cache_reuse},
    {"ideal_reuse", &Summary::ideal_reuse},
    {"reuse_of_ideal", &Summary::reuse_of_ideal},
    {"tier_device", &Summary::tier_device},
    {"tier_host", &Summary::tier_host},
    {"tier_disk", &Summary::tier_disk},
    {"cost_per_mtok", &Summary::cost_per_mtok},
    {"output_tok_s_all", &Summary::output_tok_s_all},
    {"ttft_p90_all", &Summary::ttft_p90_all},
};

std::optional<double> GetOpt(const nlohmann::json& j, const char* k) {
  if (j.contains(k) && j[k].is_number()) return j[k].get<double>();
  return std::nullopt;
}
}  // namespace

nlohmann::json SummaryToJson(const Summary& s) {
  nlohmann::json j;
  j["label"] = s.label;
  j["workload"] = s.workload;
  j["concurrency"] = s.concurrency;
  j["gpus"] = s.gpus;
  j["window_s"] = s.window_s;
  for (const auto& f : kCountFields) j[f.key] = s.*f.field;
  for (const auto& f : kOptFields) {
    const std::optional<double>& v = s.*f.field;
    j[f.key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  }
  j["cache_reuse_source"] = s.cache_reuse_source;
  j["gpu_hour_cost"] = s.gpu_hour_cost;
  j["speculative"] = s.spec ? SpecSummaryToJson(*s.spec) : nlohmann::json(nullptr);
  return j;
}

Summary SummaryFromJson(const nlohmann::json& j) {
  Summary s;
  if (!j.is_object()) return s;
  if (j.contains("label") && j["label"].is_string()) s.label = j["label"].get<std::string>();
  if (j.contains("workload") && j["workload"].is_string()) s.workload = j["workload"].get<std::string>();
  if (j.contains("cache_reuse_source") && j["cache_reuse_source"].is_string()) {
    s.cache_reuse_source = j["cache_reuse_source"].get<std::string>();
  }
  auto num = [&](const char* k, double d) { return GetOpt(j, k).value_or(d); };
  s.concurrency = static_cast<int32_t>(num("concurrency", 0));
  s.gpus = num("gpus", 1);
  s.window_s = num("window_s", 0);
  for (const auto& f : kCountFields) s.*f.field = static_cast<int64_t>(num(f.key, 0));
  for (const auto& f : kOptFields) s.*f.field = GetOpt(j, f.key);
  s.gpu_hour_cost = num("gpu_hour_cost", 0);
  if (j.contains("speculative")) s.spec = SpecSummaryFromJson(j["speculative"]);
  return s;
}

}  // namespace pg::bench
