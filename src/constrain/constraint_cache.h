// ConstraintCache: compiled constraints, each built once per (what it
// constrains, tokenizer) and shared by every request that asks for the same.
//
// The key is the caller's canonical text of the request's constraint (e.g.
// the response_format schema dumped in its written order, or the tool list)
// joined with the vocabulary's fingerprint. Bounded: past kMaxEntries the
// least recently used entry is dropped (sequences holding it keep it alive).
//
// Thread-safety: all methods are thread-safe (HTTP threads compile; the
// engine thread only uses the CompiledConstraint it was handed). Two threads
// missing on the same key may both build; the first to finish is kept.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "constrain/constraint.h"

namespace pg {

class ConstraintCache {
 public:
  static constexpr size_t kMaxEntries = 64;

  // The process-wide cache the server uses.
  static ConstraintCache& Global();

  using Builder = std::function<Result<Grammar>()>;
  // The constraint for `key` (cached), or `build()`'s grammar bound to
  // `vocab` and cached. Errors from `build` are returned, never cached.
  Result<std::shared_ptr<const CompiledConstraint>> GetOrBuild(const std::string& key,
                                                               std::shared_ptr<const TokenVocabulary> vocab,
                                                               const std::string& description, const Builder& build);

  size_t size() const;
  int64_t builds() const;  // grammars compiled so far (misses)

 private:
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // keys, most recent first
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<const CompiledConstraint>, std::list<std::string>::iterator>>
      entries_;
  int64_t builds_ = 0;
};

}  // namespace pg
