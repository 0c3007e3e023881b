#include "server/anthropic/anthropic_writer.h"

#include "server/common/api_error.h"
#include "server/core/json_text.h"

namespace pg {

using json = nlohmann::json;

json AnthropicWriter::Usage(const GenerationResult& r, int64_t output_tokens) const {
  AnthropicCacheUsage cache = AccountCacheUsage(r.prompt_tokens, r.cache.cached_tokens, prefixes_);
  return AnthropicUsageJson(cache, output_tokens, r);
}

std::string AnthropicWriter::StreamStart(const GenerationResult& r) { return stream_.Start(Usage(r, 0)); }

std::string AnthropicWriter::Text(const std::vector<ToolCallEvent>& events) {
  std::string out;
  for (const ToolCallEvent& ev : events) {
    if (ev.kind == ToolCallEvent::Kind::kContent) out += stream_.Text(ev.text);
  }
  return out;
}

std::string AnthropicWriter::StreamStep(const WriterStep& step) { return Text(step.events); }

std::string AnthropicWriter::StreamEnd(const WriterStep& step, const GenerationEnd& end, const GenerationResult& r) {
  const std::string reason = AnthropicStopReason(end.finish_reason, end.stop_sequence);
  return Text(step.events) + stream_.Finish(end.calls, reason, reason == "stop_sequence" ? end.stop_sequence : "",
                                            Usage(r, r.completion_tokens));
}

std::string AnthropicWriter::StreamError(const ApiError& error) { return stream_.Error(error); }

std::string AnthropicWriter::Body(const GenerationEnd& end, const std::vector<TokenEvent>&, const GenerationResult& r) {
  const std::string reason = AnthropicStopReason(end.finish_reason, end.stop_sequence);
  return DumpJson(AnthropicMessageJson(header_, end.text, end.calls, reason,
                                       reason == "stop_sequence" ? end.stop_sequence : "",
                                       Usage(r, r.completion_tokens)));
}

}  // namespace pg
