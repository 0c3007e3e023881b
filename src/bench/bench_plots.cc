#include "bench/bench_plots.h"

#include <algorithm>
#include <cmath>

#include "bench/svg_plot.h"

namespace pg::bench {

std::string ThroughputInteractivityPlot(const std::vector<Curve>& curves, const std::vector<ReferencePoint>& refs) {
  std::vector<PlotSeries> series;
  double lo = INFINITY, hi = 0;
  for (const Curve& c : curves) {
    PlotSeries s;
    s.name = c.label;
    for (const Summary& r : c.runs) {
      if (r.interactivity_p50 && r.output_tok_s_gpu) {
        s.points.push_back({*r.interactivity_p50, *r.output_tok_s_gpu});
        lo = std::min(lo, *r.output_tok_s_gpu);
        hi = std::max(hi, *r.output_tok_s_gpu);
      }
    }
    std::sort(s.points.begin(), s.points.end());
    series.push_back(std::move(s));
  }
  for (const ReferencePoint& r : refs) {
    if (!r.interactivity || !r.output_tok_s_gpu) continue;
    PlotSeries s;
    s.name = "ref: " + r.label;
    s.lines = false;
    s.points.push_back({*r.interactivity, *r.output_tok_s_gpu});
    lo = std::min(lo, *r.output_tok_s_gpu);
    hi = std::max(hi, *r.output_tok_s_gpu);
    series.push_back(std::move(s));
  }
  PlotLayout spec;
  spec.title = "Throughput vs interactivity";
  spec.x_label = "interactivity, tok/s per user (median)";
  spec.y_label = "output tok/s per GPU";
  spec.log_y = lo > 0 && hi / lo > 50;  // measured CPU points beside GPU references
  if (!spec.log_y) spec.y_min = 0;
  return RenderSvg(spec, series);
}

std::string TtftCdfPlot(const std::vector<RunReport>& runs) {
  std::vector<PlotSeries> series;
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::vector<double> t;
    for (const RequestRecord& r : runs[i].records) {
      if (!r.warmup && r.ok && r.ttft_s >= 0) t.push_back(r.ttft_s);
    }
    std::sort(t.begin(), t.end());
    PlotSeries s;
    s.name = runs[i].summary.label.empty() ? "run " + std::to_string(i + 1) : runs[i].summary.label;
    s.markers = false;
    s.step = true;
    for (size_t k = 0; k < t.size(); ++k) {
      if (k == 0) s.points.push_back({t[0], 0.0});
      s.points.push_back({t[k], static_cast<double>(k + 1) / static_cast<double>(t.size())});
      if (t[k] > 0) lo = std::min(lo, t[k]);
      hi = std::max(hi, t[k]);
    }
    series.push_back(std::move(s));
  }
  PlotLayout spec;
  spec.title = "TTFT distribution";
  spec.x_label = "time to first token, s";
  spec.y_label = "fraction of requests";
  spec.log_x = lo > 0 && hi / lo > 100;
  spec.y_min = 0;
  spec.y_max = 1;
  return RenderSvg(spec, series);
}

std::string CacheReuseOverTimePlot(const RunReport& run, int bins) {
  std::vector<const RequestRecord*> recs;
  double t_end = 0;
  for (const RequestRecord& r : run.records) {
    if (r.warmup || !r.ok) continue;
    recs.push_back(&r);
    t_end = std::max(t_end, r.send_s);
  }
  bins = std::max(1, bins);
  struct Bin {
    double prompt = 0, sent = 0, ideal = 0, cached = 0, dev = 0, host = 0, disk = 0;
    bool known = true, tiers = true;
  };
  std::vector<Bin> b(static_cast<size_t>(bins));
  double width = t_end > 0 ? t_end / bins : 1;
  for (const RequestRecord* r : recs) {
    size_t i = std::min<size_t>(static_cast<size_t>(r->send_s / width), b.size() - 1);
    Bin& x = b[i];
    double prompt = static_cast<double>(r->prompt_tokens >= 0 ? r->prompt_tokens : r->sent_prompt_tokens);
    x.prompt += prompt;
    x.sent += static_cast<double>(r->sent_prompt_tokens);
    x.ideal += static_cast<double>(r->ideal_cached_tokens);
    if (r->cached_tokens < 0) x.known = false;
    x.cached += static_cast<double>(std::max<int64_t>(0, r->cached_tokens));
    if (r->cached_device < 0 && r->cached_host < 0 && r->cached_disk < 0) x.tiers = false;
    x.dev += static_cast<double>(std::max<int64_t>(0, r->cached_device));
    x.host += static_cast<double>(std::max<int64_t>(0, r->cached_host));
    x.disk += static_cast<double>(std::max<int64_t>(0, r->cached_disk));
  }
  PlotSeries total{"cached (all tiers)"}, dev{"device tier"}, host{"host tier"}, disk{"disk tier"},
      ideal{"ideal (unlimited cache)"};
  ideal.dashed = true;
  ideal.markers = false;
  bool any_tiers = false;
  for (size_t i = 0; i < b.size(); ++i) {
    const Bin& x = b[i];
    if (x.prompt <= 0) continue;
    double mid = (static_cast<double>(i) + 0.5) * width;
    if (x.known) total.points.push_back({mid, 100 * x.cached / x.prompt});
    if (x.tiers) {
      any_tiers = true;
      dev.points.push_back({mid, 100 * x.dev / x.prompt});
      host.points.push_back({mid, 100 * x.host / x.prompt});
      disk.points.push_back({mid, 100 * x.disk / x.prompt});
    }
    if (x.sent > 0) ideal.points.push_back({mid, 100 * x.ideal / x.sent});
  }
  std::vector<PlotSeries> series = {total};
  if (any_tiers) {
    series.push_back(dev);
    series.push_back(host);
    series.push_back(disk);
  }
  series.push_back(ideal);
  PlotLayout spec;
  spec.title = "Cache reuse over time" + (run.summary.label.empty() ? "" : " (" + run.summary.label + ")");
  spec.x_label = "time since start (send time), s";
  spec.y_label = "cached / prompt tokens, %";
  spec.y_min = 0;
  spec.y_max = 100;
  spec.x_min = 0;
  return RenderSvg(spec, series);
}

}  // namespace pg::bench
