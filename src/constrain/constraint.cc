#include "constrain/constraint.h"

#include <utility>

namespace pg {
namespace {

void Set(TokenBitmask* m, int32_t id) { (*m)[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63); }

// Depth-first walk of the trie below `node`, the matcher at `state` (the
// bytes of the path so far accepted). depth_states[d] is scratch for depth d.
void Walk(const Grammar& g, const TokenTrie& t, uint32_t node, size_t depth,
          std::vector<GrammarMatcher::State>* depth_states, TokenBitmask* out) {
  const TokenTrie::Node& n = t.nodes[node];
  for (uint32_t i = 0; i < n.n_tokens; ++i) Set(out, t.token_ids[n.first_token + i]);
  if (depth_states->size() < depth + 2) depth_states->resize(depth + 2);
  for (uint32_t e = 0; e < n.n_edges; ++e) {
    const TokenTrie::Edge& edge = t.edges[n.first_edge + e];
    GrammarMatcher::State& next = (*depth_states)[depth + 1];
    GrammarMatcher::Step(g, (*depth_states)[depth], edge.byte, &next);
    if (!next.empty()) Walk(g, t, edge.child, depth + 1, depth_states, out);
  }
}

}  // namespace

CompiledConstraint::CompiledConstraint(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocab,
                                       std::string description)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)), description_(std::move(description)) {}

void CompiledConstraint::ComputeMask(const GrammarMatcher& m, TokenBitmask* out) const {
  const TokenVocabulary& v = *vocab_;
  std::vector<GrammarMatcher::State> depth_states(1, m.state());
  if (GrammarMatcher::InUnboundedStringBody(grammar_, m.state())) {
    // Inside a string: every token that keeps the body open is allowed, and
    // only the others (quotes, escapes, split UTF-8...) need the walk.
    *out = v.string_body_mask();
    Walk(grammar_, v.non_string_body_trie(), 0, 0, &depth_states, out);
  } else {
    out->assign((static_cast<size_t>(v.n_vocab()) + 63) / 64, 0);
    Walk(grammar_, v.trie(), 0, 0, &depth_states, out);
  }
  bool any = false;
  for (uint64_t w : *out) any |= w != 0;
  if (!any || GrammarMatcher::Ends(grammar_, m.state()))
    for (int32_t id : v.eog_ids()) Set(out, id);
}

void CompiledConstraint::Mask(const GrammarMatcher& m, TokenBitmask* out) const {
  std::string key;
  m.Key(&key);
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = masks_.find(key);
    if (it != masks_.end()) {
      ++stats_.hits;
      lru_.splice(lru_.begin(), lru_, it->second.second);
      *out = it->second.first;
      return;
    }
    ++stats_.misses;
  }
  ComputeMask(m, out);  // outside the lock: other sequences keep going
  std::lock_guard<std::mutex> lk(mu_);
  if (masks_.count(key)) return;
  lru_.push_front(key);
  masks_.emplace(std::move(key), std::make_pair(*out, lru_.begin()));
  if (masks_.size() > kMaxCachedMasks) {
    masks_.erase(lru_.back());
    lru_.pop_back();
  }
}

CompiledConstraint::CacheStats CompiledConstraint::cache_stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

ConstraintMatcher::ConstraintMatcher(std::shared_ptr<const CompiledConstraint> constraint)
    : c_(std::move(constraint)), matcher_(&c_->grammar()) {}

const TokenBitmask& ConstraintMatcher::Allowed() {
  if (mask_valid_) return mask_;
  if (finished_) {
    mask_.assign((static_cast<size_t>(c_->vocab().n_vocab()) + 63) / 64, 0);
    for (int32_t id : c_->vocab().eog_ids()) Set(&mask_, id);
  } else {
    c_->Mask(matcher_, &mask_);
  }
  mask_valid_ = true;
  return mask_;
}

bool ConstraintMatcher::Accept(int32_t token) {
  if (!MaskHas(Allowed(), token)) return false;
  mask_valid_ = false;
  const TokenVocabulary& v = c_->vocab();
  if (!v.in_trie(token)) {  // an end-of-generation token
    finished_ = true;
    dead_end_ = !GrammarMatcher::Ends(c_->grammar(), matcher_.state());
    return true;
  }
  const bool ok = matcher_.AdvanceBytes(v.bytes(token));
  return ok;
}

}  // namespace pg
