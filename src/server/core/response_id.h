// NewResponseId: unique ids for responses and tool calls,
// "<prefix><24 hex digits>" ("chatcmpl-...", "msg_...", "call_...").
//
// Thread-safety: callable from any thread (a thread-local generator mixed
// with a shared counter).
#pragma once

#include <string>

namespace pg {

std::string NewResponseId(const char* prefix);

}  // namespace pg
