#include "server/openai/codex_model_info.h"

#include <algorithm>

namespace pg {

const char* const kCodexBaseInstructions =
    "You are a coding agent working in the user's terminal. Use the tools you are given to read files, run "
    "commands and change code; look before you change anything, keep changes small and to the point, and say "
    "briefly what you did. When the task is done, or you need the user, end your turn with a short answer.";

nlohmann::json CodexModelInfoJson(const ServiceInfo& info) {
  // Tool output kept in context, in tokens: an eighth of the window, at most
  // Codex's usual 10,000.
  const int64_t tool_output = std::clamp<int64_t>(info.n_ctx / 8, 256, 10000);
  return {{"slug", info.model_name},
          {"display_name", info.model_name},
          {"description", "served by prosgrow"},
          {"context_window", info.n_ctx},
          {"input_modalities", {"text"}},
          {"supported_reasoning_levels", nlohmann::json::array()},
          {"default_reasoning_level", nullptr},
          {"shell_type", "default"},
          {"visibility", "list"},
          {"supported_in_api", true},
          {"priority", 0},
          {"upgrade", nullptr},
          {"base_instructions", kCodexBaseInstructions},
          {"supports_reasoning_summaries", false},
          {"support_verbosity", false},
          {"default_verbosity", nullptr},
          {"apply_patch_tool_type", nullptr},
          {"truncation_policy", {{"mode", "tokens"}, {"limit", tool_output}}},
          {"supports_parallel_tool_calls", true},
          {"experimental_supported_tools", nlohmann::json::array()}};
}

}  // namespace pg
