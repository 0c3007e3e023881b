// The `kv_hints` request field (chat and completions): explicit KV cache
// hints, parsed into GenerationRequest::kv_hints. The shape and what each
// action does are in docs/kv-cache.md ("KV hints"). Two spellings:
//
//   short form: an array of hints
//     "kv_hints": [{"action": "retain", "prefix_tokens": 512, "ttl_s": 300}]
//   envelope (the shape of vLLM's kv_hints RFC: protocol_version, actions
//   with action_type and payload):
//     "kv_hints": {"protocol_version": 1, "message_id": "m1",
//                  "actions": [{"action_id": "a1", "action_type": "pin",
//                               "action_version": 1,
//                               "payload": {"prefix_tokens": 512, "ttl_s": 300}}]}
//   The envelope also takes the versions and names of the SGLang / Dynamo
//   envelopes: protocol_version "0.1", action_version "1" or "1.0", and
//   action types namespaced as "kv.retain", "kv.pin", "kv.demote",
//   "kv.prefetch". Other versions and action types are refused.
//
// Every bad value is a 400 whose `param` names the field
// (e.g. "kv_hints[1].ttl_s"); unknown keys are refused, not ignored.
// Internal to src/server. Pure; thread-safe.
#pragma once

#include <cstdint>

#include "server/core/request.h"
#include "server/core/request_fields.h"

namespace pg {

inline constexpr int kMaxKvHints = 8;            // hints per request
inline constexpr double kMaxKvHintTtlS = 86400;  // one day

// Reads "kv_hints" (absent or null: none) into req->kv_hints. prefix_tokens
// must be in [1, n_ctx] (a prefix longer than the prompt covers the prompt).
void ReadKvHints(FieldReader& r, int64_t n_ctx, ApiRequest* req);

}  // namespace pg
