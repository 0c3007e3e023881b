// Output identity between two bench runs of the same workload: the check
// behind "identical outputs" when a server is run with and without its cache
// (greedy decoding, so the same prompt must give the same text).
// Requests are matched by (session, turn); only requests that succeeded in
// both runs count. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/request_record.h"

namespace pg::bench {

// 16 hex digits of XXH3-64 of the output text; "" for an empty output.
std::string OutputHash(const std::string& text);

struct OutputMatch {
  int64_t matched = 0;                 // requests that succeeded in both runs, with an output
  int64_t identical = 0;               // of those, equal output hashes
  std::vector<std::string> differing;  // "session turn N" of the first few that differ
};

OutputMatch MatchOutputs(const std::vector<RequestRecord>& a, const std::vector<RequestRecord>& b);

// "identical outputs: 63 / 63 matched requests (100.0%)", or "... n/a" when
// nothing matched (e.g. runs saved before output hashes were recorded).
std::string DescribeOutputMatch(const OutputMatch& m);

}  // namespace pg::bench
