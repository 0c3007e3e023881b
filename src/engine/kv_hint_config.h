// The KV hint and quota settings of an EngineConfig (--kv-pin-budget,
// --kv-retain-budget, --kv-session-quota-*, --kv-fair-share), in blocks of the
// cache's block size, for KvCacheConfig.
#pragma once

#include <cstddef>

#include "base/status.h"
#include "engine/engine_config.h"
#include "kv/kv_cache_manager.h"

namespace pg {

// InvalidArgument naming the flag when a size holds no block.
Status ApplyKvHintConfig(const EngineConfig& c, size_t block_bytes, KvCacheConfig* kc);

}  // namespace pg
