// DraftLength: how many tokens to draft next for one sequence, adapted to
// recent acceptance. All accepted: one more next time (up to max); some
// rejected: the accepted count plus one (at least min). A drafter that keeps
// missing thus drafts short and costs little; one that keeps hitting drafts
// the full --spec-draft-max.
//
// Thread-safety: per-sequence state; one thread at a time.
#pragma once

#include <algorithm>

namespace pg {

class DraftLength {
 public:
  explicit DraftLength(int max, int min = 1) : max_(std::max(1, max)), min_(std::clamp(min, 1, max_)), next_(max_) {}

  int next() const { return next_; }
  void Record(int drafted, int accepted) {
    if (drafted <= 0) return;
    next_ = accepted >= drafted ? std::min(max_, next_ + 1) : std::clamp(accepted + 1, min_, max_);
  }

 private:
  int max_, min_, next_;
};

}  // namespace pg
