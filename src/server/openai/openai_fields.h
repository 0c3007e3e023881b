// The top-level keys of the OpenAI routes (/v1/chat/completions,
// /v1/completions, and the same bodies on /tokenize and /apply-template):
// every key prosgrow reads, the few it accepts that need no action, and those
// it refuses by name with what to use instead. Any other key is a 400 that
// names it ("unknown_parameter"): no field is silently ignored. The lists and
// what each key does are in docs/server.md, "Request fields".
//
// Internal to src/server. Pure; thread-safe.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "server/core/request_fields.h"

namespace pg {

enum class OpenAiRoute { kChat, kCompletion };

// Fails r on the first key of `body` that `route` does not read, accept or
// refuse (see above), on a refused key, and on an accepted no-action key of
// the wrong type or with a value that would ask for an action (store: true,
// modalities other than ["text"]). `also`: keys the calling endpoint reads
// itself (/apply-template's add_generation_prompt).
void CheckFieldNames(FieldReader& r, const nlohmann::ordered_json& body, OpenAiRoute route,
                     std::initializer_list<const char*> also = {});

}  // namespace pg
