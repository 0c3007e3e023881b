// The prompt cache's side of a response's usage, in the form every dialect
// nests it (OpenAI's prompt_tokens_details, Anthropic's usage.prosgrow):
// the cached tokens by tier and why the uncached ones missed. Pure
// functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/inference_service.h"

namespace pg {

// {"device": n, "host": n, "disk": n, "remote": n}: usage's cached_tokens_by_tier.
nlohmann::json CachedByTierJson(const TierTokens& t);
// Why the uncached prompt tokens missed (docs/kv-cache.md, "Miss reasons"):
// {"never_seen", "evicted", "diverged", "loading", "policy" (these five sum to
// prompt_tokens - cached_tokens), "evicted_by_tier": {device, host, disk},
// "evicted_seconds_ago" (only when some evicted: since the first evicted
// block of the prompt was dropped)}.
nlohmann::json MissReasonsJson(const MissReasons& m);

}  // namespace pg
