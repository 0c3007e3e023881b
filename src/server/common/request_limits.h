// RequestLimits: bounds on what one client request may contain, enforced
// while it is parsed. Each has a `prosgrow serve` flag (AddServerFlags); a
// request past a limit gets a 400 (413 for the body size) naming the limit.
// Plain value type.
#pragma once

#include "base/bounded_json.h"

namespace pg {

struct RequestLimits {
  int max_json_depth = kDefaultMaxJsonDepth;  // --max-json-depth
  int max_messages = 4096;                    // --max-messages
  int max_tools = 128;                        // --max-tools
  int max_stop = 16;                          // --max-stop
  int max_logit_bias = 1024;                  // --max-logit-bias
  // --default-max-tokens: the completion cap of a request that names none
  // (0 = the room the context leaves, FitToContext).
  int default_max_tokens = 0;
};

}  // namespace pg
