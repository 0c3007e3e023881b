// TopKSelect: the DeepSeek sparse attention choice of keys for one query —
// the k highest-scoring of n causal keys, as positions in increasing order
// (the order attention reads them in). Ties go to the lower position; a NaN
// score ranks below every number. When n <= k every key is chosen.
//
// TopKSelectScalar is the reference (a stable sort of all n); TopKSelect
// partitions around the k-th key (nth_element, O(n)) and sorts only the k
// chosen ones. Both give the same set, so the same positions.
//
// Thread-safety: pure functions on caller memory.
#pragma once

#include <cstdint>

namespace pg {

// out: at least min(n, k) entries; scratch: n entries. Returns min(n, k).
int64_t TopKSelect(const float* scores, int64_t n, int64_t k, int32_t* out, int32_t* scratch);
int64_t TopKSelectScalar(const float* scores, int64_t n, int64_t k, int32_t* out, int32_t* scratch);

}  // namespace pg
