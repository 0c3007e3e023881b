// Reading Prometheus text exposition as served on /metrics: the labelled
// samples (`name{label="value",...} number`) that bench's reports take
// per-reason, per-tier and per-drafter counters from.
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace pg::bench {

struct LabelledSample {
  std::string_view name;  // before the '{'
  std::string_view line;  // the whole sample line
  double value = 0;       // the number after the '}'
};

// Calls fn for every line with a label set; comments, blank lines and
// unlabelled samples are skipped.
void ForEachLabelledSample(const std::string& text, const std::function<void(const LabelledSample&)>& fn);

// The value of label `key` in a sample line's {...}, "" when absent.
std::string LabelValue(std::string_view line, const std::string& key);

}  // namespace pg::bench
