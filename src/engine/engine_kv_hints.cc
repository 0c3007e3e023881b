// Engine: the KV hints of a request (GenerationRequest::kv_hints). What each
// action does is written in docs/kv-cache.md ("KV hints"); the cache's hint
// and quota settings come from kv_hint_config.h. Engine thread only.
#include <algorithm>

#include "base/log.h"
#include "engine/engine.h"

namespace pg {
namespace {

PrefixAction ActionOf(KvHint::Action a) {
  switch (a) {
    case KvHint::Action::kRetain: return PrefixAction::kRetain;
    case KvHint::Action::kPin: return PrefixAction::kPin;
    case KvHint::Action::kDemote: return PrefixAction::kDemote;
    case KvHint::Action::kPrefetch: return PrefixAction::kPrefetch;
  }
  return PrefixAction::kRetain;
}

}  // namespace

void Engine::ApplyKvHints(const Sequence& s, bool finished) {
  if (s.request.kv_hints.empty()) return;
  CacheRequest req;
  req.salt = s.request.cache_salt;
  req.session = s.request.session_id;
  req.use_prefix_cache = config_.prefix_cache;
  const int64_t n_prompt = static_cast<int64_t>(s.request.prompt.size());
  for (const KvHint& h : s.request.kv_hints) {
    const bool hold = h.action == KvHint::Action::kRetain || h.action == KvHint::Action::kPin;
    // On arrival: prefetch, and hold what is cached already (so it survives
    // the wait in the queue). When finished: hold the whole prefix, demote.
    if (!finished && !(hold || h.action == KvHint::Action::kPrefetch)) continue;
    if (finished && !(hold || h.action == KvHint::Action::kDemote)) continue;
    const int64_t n = h.prefix_tokens < 0 ? n_prompt : std::min(h.prefix_tokens, n_prompt);
    const std::span<const int32_t> prefix(s.request.prompt.data(), static_cast<size_t>(n));
    PrefixHintResult r = kv_->ApplyPrefixHint(prefix, req, ActionOf(h.action), h.ttl_s);
    if (!r.refused.empty() && h.action == KvHint::Action::kPin) {
      // A pin past the budget falls back to retain for the rest of the prefix.
      PG_LOG_DEBUG("request {}: pin hint refused in part ({}); retaining the rest", s.request.id, r.refused);
      kv_->ApplyPrefixHint(prefix, req, PrefixAction::kRetain, h.ttl_s);
    }
  }
}

}  // namespace pg
