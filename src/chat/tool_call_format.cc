#include "chat/tool_call_format.h"

#include "base/enum_names.h"
#include "base/tool_call_markers.h"

namespace pg {
namespace {

using namespace tool_markers;

bool Has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// By ToolCallFormat.
constexpr const char* kFormatNames[] = {"hermes", "llama3_json", "glm45", "deepseek_v3", "deepseek_v31"};

}  // namespace

ToolCallFormat DetectToolCallFormat(std::string_view t) {
  if (Has(t, kArgKey)) return ToolCallFormat::kGlm45;
  if (Has(t, kDsCallsBegin)) return Has(t, kDsJsonFence) ? ToolCallFormat::kDeepSeekV3 : ToolCallFormat::kDeepSeekV31;
  if (Has(t, kCallOpen)) return ToolCallFormat::kHermes;
  if (Has(t, kPythonTag) || Has(t, kLlamaHeader)) return ToolCallFormat::kLlama3Json;
  return kDefaultToolCallFormat;
}

const char* ToolCallFormatName(ToolCallFormat f) { return EnumName(f, kFormatNames, "hermes"); }

std::vector<std::string_view> ToolCallMarkers(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kHermes: return {kCallOpen, kCallClose, kPythonTag};
    case ToolCallFormat::kLlama3Json: return {kPythonTag};
    case ToolCallFormat::kGlm45: return {kCallOpen, kCallClose, kArgKey, kArgKeyEnd, kArgValue, kArgValueEnd};
    case ToolCallFormat::kDeepSeekV3:
    case ToolCallFormat::kDeepSeekV31: return {kDsCallsBegin, kDsCallsEnd, kDsCallBegin, kDsCallEnd, kDsSep};
  }
  return {};
}

}  // namespace pg
