#include "server/core/hosted_tools.h"

namespace pg {

namespace {

// OpenAI's hosted and built-in tool types (Responses and Chat Completions).
constexpr std::string_view kHosted[] = {
    "web_search",       "web_search_preview", "file_search", "computer",    "computer_use", "computer_use_preview",
    "code_interpreter", "image_generation",   "mcp",         "local_shell", "shell",        "apply_patch",
    "custom",           "tool_search"};

// "_YYYY_MM_DD", the suffix of a dated tool version.
bool IsDateSuffix(std::string_view s) {
  if (s.size() != 11 || s[0] != '_') return false;
  for (size_t i = 1; i < s.size(); ++i) {
    const bool sep = i == 5 || i == 8;
    if (sep ? s[i] != '_' : (s[i] < '0' || s[i] > '9')) return false;
  }
  return true;
}

}  // namespace

bool IsHostedToolType(std::string_view type) {
  for (std::string_view h : kHosted) {
    if (type == h) return true;
    // Dated versions: "web_search_2025_08_26", "web_search_preview_2025_03_11".
    if (type.size() == h.size() + 11 && type.substr(0, h.size()) == h && IsDateSuffix(type.substr(h.size())))
      return true;
  }
  return false;
}

}  // namespace pg
