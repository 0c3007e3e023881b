// The fields of Codex CLI's model catalogue (its ModelInfo, read from
// GET {base_url}/models when its provider authenticates with a command) for
// the served model, so Codex knows the model's real context window, that it
// takes text only, and how much tool output fits, instead of running on its
// fallback metadata. GET /v1/models merges them into each model object and
// also lists the objects under "models", where Codex reads them; OpenAI's
// SDKs read "data" and ignore the rest. Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/inference_service.h"

namespace pg {

// The instructions Codex sends as its base prompt for a catalogued model
// (ModelInfo.base_instructions replaces Codex's own default prompt).
extern const char* const kCodexBaseInstructions;

// slug, display_name, description, context_window, input_modalities,
// truncation_policy and the other fields Codex requires.
nlohmann::json CodexModelInfoJson(const ServiceInfo& info);

}  // namespace pg
