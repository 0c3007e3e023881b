// MooncakeWorkload: replays the Mooncake FAST'25 trace format, one JSON
// object per line: timestamp (ms), input_length, output_length, hash_ids (one
// per 512-token block; ids are global, equal ids are shared content).
//
// Every line is one single-request session. Open loop (--open-loop): the
// request is sent at timestamp * time_scale / 1000 seconds after the start,
// whatever is in flight. Closed loop: requests go out in file order with
// `concurrency` in flight. Content: block ids in one global scope, each block
// ScaledBlockTokens(512, length_scale) tokens; a partial last block is cut
// (see HashedPrompt). max_context > 0 skips requests whose scaled prompt +
// output exceeds it. Not recyclable: one pass is the whole file.
// Thread-safety: immutable after Load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/workload.h"

namespace pg::bench {

struct MooncakeRequest {
  double timestamp_ms = 0;
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<int64_t> hash_ids;
};

// Parses JSONL text; `name` is used in error messages ("FILE line N: ...").
Result<std::vector<MooncakeRequest>> ParseMooncake(const std::string& text, const std::string& name);

class MooncakeWorkload : public Workload {
 public:
  static constexpr int64_t kBlockTokens = 512;
  static Result<std::unique_ptr<MooncakeWorkload>> Load(const std::string& file, const TokenSpace& space,
                                                        const WorkloadOptions& opt);
  static std::unique_ptr<MooncakeWorkload> FromRequests(std::vector<MooncakeRequest> reqs, const TokenSpace& space,
                                                        const WorkloadOptions& opt);
  std::string Describe() const override;
  int64_t SessionsPerPass() const override { return static_cast<int64_t>(reqs_.size()); }
  bool Recyclable() const override { return false; }
  SessionScript MakeSession(int64_t k) const override;

 private:
  MooncakeWorkload(std::vector<MooncakeRequest> reqs, const TokenSpace& space, const WorkloadOptions& opt,
                   int64_t skipped)
      : reqs_(std::move(reqs)), space_(space), opt_(opt), skipped_(skipped) {}
  std::vector<MooncakeRequest> reqs_;
  TokenSpace space_;
  WorkloadOptions opt_;
  int64_t skipped_ = 0;
};

}  // namespace pg::bench
