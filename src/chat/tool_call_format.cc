#include "chat/tool_call_format.h"

namespace pg {
namespace {

bool Has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

}  // namespace

ToolCallFormat DetectToolCallFormat(std::string_view t) {
  if (Has(t, "<arg_key>")) return ToolCallFormat::kGlm45;
  if (Has(t, "<｜tool▁calls▁begin｜>")) {
    return Has(t, "```json") ? ToolCallFormat::kDeepSeekV3 : ToolCallFormat::kDeepSeekV31;
  }
  if (Has(t, "<tool_call>")) return ToolCallFormat::kHermes;
  if (Has(t, "<|python_tag|>") || Has(t, "<|start_header_id|>")) return ToolCallFormat::kLlama3Json;
  return kDefaultToolCallFormat;
}

const char* ToolCallFormatName(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kHermes: return "hermes";
    case ToolCallFormat::kLlama3Json: return "llama3_json";
    case ToolCallFormat::kGlm45: return "glm45";
    case ToolCallFormat::kDeepSeekV3: return "deepseek_v3";
    case ToolCallFormat::kDeepSeekV31: return "deepseek_v31";
  }
  return "hermes";
}

std::vector<std::string_view> ToolCallMarkers(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kHermes: return {"<tool_call>", "</tool_call>", "<|python_tag|>"};
    case ToolCallFormat::kLlama3Json: return {"<|python_tag|>"};
    case ToolCallFormat::kGlm45:
      return {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"};
    case ToolCallFormat::kDeepSeekV3:
    case ToolCallFormat::kDeepSeekV31:
      return {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
              "<｜tool▁sep｜>"};
  }
  return {};
}

}  // namespace pg
