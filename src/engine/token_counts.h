// TokenCounts: how often each token id occurs in one sequence, split into
// "in the prompt" and "generated so far": the state behind the sampler's
// repetition, frequency and presence penalties.
//
// Updated one token at a time (O(1) expected), never by rescanning the
// history; entries() lists each distinct id once, in first-seen order, so a
// penalty step costs O(distinct ids), not O(vocab) or O(history).
//
//   slots_   [power of two, at most half full]  id -> index into entries_ (-1 = empty),
//            linear probing from (id * 2654435761) & mask
//   entries_ [distinct ids]                     {id, generated count, in prompt}
//
// Reserve(n) sizes both for n distinct ids, so the next adds do not allocate
// (past that the table doubles, amortised O(1)).
//
// Thread-safety: a plain value type; not synchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pg {

class TokenCounts {
 public:
  struct Entry {
    int32_t id = 0;
    int32_t generated = 0;   // occurrences among the generated tokens
    bool in_prompt = false;  // occurs at least once in the prompt
  };

  // Room for `distinct` distinct ids without allocating.
  void Reserve(size_t distinct);
  void AddPrompt(int32_t id) { Upsert(id).in_prompt = true; }
  void AddGenerated(int32_t id) { Upsert(id).generated++; }

  // Each distinct id seen, once, in first-seen order.
  std::span<const Entry> entries() const { return entries_; }
  // nullptr when `id` was never added.
  const Entry* Find(int32_t id) const;

 private:
  Entry& Upsert(int32_t id);
  size_t Probe(int32_t id) const;  // the slot holding id, or the empty slot where it would go
  void Rehash(size_t n_slots);

  std::vector<Entry> entries_;
  std::vector<int32_t> slots_;
};

}  // namespace pg
