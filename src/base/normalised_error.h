// NormalisedError: sum (a - ref)^2 / sum ref^2 over two equally long
// vectors, in double; the squared error itself when ref is all zeros, and
// infinity when the error is not finite. How the GPU backend's op tests and
// the device executor's agreement with the CPU (gpu/executor/
// device_agreement.h) measure a result against its reference.
#pragma once

#include <cmath>
#include <cstddef>

namespace pg {

inline double NormalisedError(const float* a, const float* ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - ref[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
  }
  if (!std::isfinite(num)) return INFINITY;
  return den == 0 ? num : num / den;
}

}  // namespace pg
