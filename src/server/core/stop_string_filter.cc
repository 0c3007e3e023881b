#include "server/core/stop_string_filter.h"

#include <algorithm>

#include "base/held_text.h"

namespace pg {

StopStringFilter::StopStringFilter(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

std::string StopStringFilter::Push(std::string_view text) {
  if (stopped_) return "";
  pending_.append(text);
  size_t first = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = pending_.find(s);
    if (at < first || (at == first && at != std::string::npos && s.size() < matched_.size())) {
      first = at;
      matched_ = s;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // Longest suffix of pending_ that is a proper prefix of a stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    size_t max_len = std::min(s.size() - 1, pending_.size());
    for (size_t len = max_len; len > hold; --len) {
      if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  return ReleaseAllBut(&pending_, hold);
}

std::string StopStringFilter::Flush() {
  std::string out = ReleaseAllBut(&pending_, 0);
  return stopped_ ? std::string() : out;
}

}  // namespace pg
