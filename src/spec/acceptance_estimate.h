// AcceptanceEstimate: a drafter's conditional acceptance per draft position,
// p = P(position j accepted | positions before it accepted), counted from
// verification steps: a step that accepted a of k drafts tried a + 1
// positions (a when all k were accepted) and accepted a of them; p is the
// ratio (the maximum-likelihood p of a geometric acceptance), pulled toward
// a prior while few positions have been tried.
//
// Thread-safety: a value type; one thread at a time.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pg {

class AcceptanceEstimate {
 public:
  void Record(int drafted, int accepted) {
    if (drafted <= 0) return;
    accepted_ += accepted;
    tried_ += accepted + (accepted < drafted ? 1 : 0);
  }
  // (accepted + weight * prior) / (tried + weight).
  double p(double prior, double weight) const {
    return std::clamp((static_cast<double>(accepted_) + weight * prior) / (static_cast<double>(tried_) + weight), 0.0,
                      1.0);
  }
  int64_t tried() const { return tried_; }

 private:
  int64_t tried_ = 0, accepted_ = 0;
};

}  // namespace pg
