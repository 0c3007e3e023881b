// Decodes a KV event batch payload in vLLM's wire format (array-like msgpack
// structs, events tagged by class name; see src/kvevents/event_encoder.h)
// back into a KvEventBatch. Unknown event tags and malformed payloads are
// errors, never crashes. Thread-safety: pure function.
#pragma once

#include <string_view>

#include "base/status.h"
#include "kvevents/kv_event.h"

namespace pg {

Result<KvEventBatch> DecodeKvEventBatch(std::string_view payload);

}  // namespace pg
