#include "model/topk_select.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pg {
namespace {

// Strict weak order: higher score first, NaN last, then lower position.
struct Before {
  const float* s;
  bool operator()(int32_t a, int32_t b) const {
    const float x = s[a], y = s[b];
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn != yn) return yn;
    if (!xn && x != y) return x > y;
    return a < b;
  }
};

int64_t All(int64_t n, int32_t* out) {
  std::iota(out, out + n, 0);
  return n;
}

}  // namespace

int64_t TopKSelectScalar(const float* scores, int64_t n, int64_t k, int32_t* out, int32_t* scratch) {
  if (n <= k) return All(n, out);
  std::iota(scratch, scratch + n, 0);
  std::stable_sort(scratch, scratch + n, Before{scores});
  std::copy(scratch, scratch + k, out);
  std::sort(out, out + k);
  return k;
}

int64_t TopKSelect(const float* scores, int64_t n, int64_t k, int32_t* out, int32_t* scratch) {
  if (n <= k) return All(n, out);
  std::iota(scratch, scratch + n, 0);
  std::nth_element(scratch, scratch + (k - 1), scratch + n, Before{scores});
  std::copy(scratch, scratch + k, out);
  std::sort(out, out + k);
  return k;
}

}  // namespace pg
