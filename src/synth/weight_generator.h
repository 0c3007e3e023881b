// Deterministic pseudo-random weights for make-model.
//
// Element i of a tensor is mean + std * z(key, i), where key is
// HashName(tensor name, seed) and z is an Irwin-Hall(4) variate made from the
// four 16-bit lanes of Mix64(key + i), rescaled to unit variance: roughly
// normal, bounded by +-2*sqrt(3). Counter-based, so any row range can be
// produced independently and the result does not depend on threading.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace pg {

// out[j] = mean + std * z(key, first + j) for j in [0, n).
void GenerateWeights(uint64_t key, int64_t first, int64_t n, float mean, float std, float* out);

}  // namespace pg
