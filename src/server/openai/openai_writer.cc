#include "server/openai/openai_writer.h"

#include "server/common/api_error.h"
#include "server/core/json_text.h"
#include "server/core/tool_call_chunks.h"
#include "server/openai/openai_error.h"

namespace pg {

using json = nlohmann::json;

std::string OpenAiWriter::Chunk(const json& delta, const json& logprobs) const {
  return SseEvent(DumpJson(ChunkJson(o_.header, delta, "", logprobs, o_.include_usage)));
}

json OpenAiWriter::Logprobs(const std::vector<TokenEvent>& tokens) {
  if (!o_.logprobs) return nullptr;
  return o_.header.chat ? ChatLogprobsJson(tokens, tok_) : CompletionLogprobsJson(tokens, tok_, &text_offset_);
}

std::string OpenAiWriter::StreamStart(const GenerationResult&) {
  if (!o_.header.chat) return "";
  return Chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
}

std::string OpenAiWriter::Deltas(const std::vector<json>& deltas, const std::vector<TokenEvent>& tokens) {
  std::string out;
  bool lp_sent = !o_.logprobs || tokens.empty();
  for (const json& d : deltas) {
    json lp = nullptr;
    if (!lp_sent && d.contains("content")) {
      lp = Logprobs(tokens);
      lp_sent = true;
    }
    out += Chunk(d, lp);
  }
  if (!lp_sent) out += Chunk({{"content", ""}}, Logprobs(tokens));
  return out;
}

std::string OpenAiWriter::StreamStep(const WriterStep& step) {
  const auto& [events, tokens, out] = step;
  if (out.tools()) return Deltas(ToolCallDeltas(events, out.calls(), /*close_cut=*/false), tokens);
  std::string text;
  for (const ToolCallEvent& ev : events) text += ev.text;
  if (text.empty() && (!o_.logprobs || tokens.empty())) return "";
  return Chunk({{"content", text}}, Logprobs(tokens));
}

std::string OpenAiWriter::StreamEnd(const WriterStep& step, const GenerationEnd& end, const GenerationResult& r) {
  std::string bytes;
  if (step.out.tools())
    bytes += Deltas(ToolCallDeltas(step.events, step.out.calls(), end.finish_reason != "length"), {});
  bytes += SseEvent(DumpJson(ChunkJson(o_.header, json::object(), end.finish_reason, nullptr, o_.include_usage)));
  if (o_.include_usage) bytes += SseEvent(DumpJson(UsageChunkJson(o_.header, r)));
  return bytes + "data: [DONE]\n\n";
}

std::string OpenAiWriter::StreamError(const ApiError& error) {
  return SseEvent(OpenAiErrorJson(error)) + "data: [DONE]\n\n";
}

std::string OpenAiWriter::Body(const GenerationEnd& end, const std::vector<TokenEvent>& tokens,
                               const GenerationResult& r) {
  json lp = nullptr;
  if (o_.logprobs) {
    int64_t offset = 0;
    lp = o_.header.chat ? ChatLogprobsJson(tokens, tok_) : CompletionLogprobsJson(tokens, tok_, &offset);
  }
  return DumpJson(FullResponseJson(o_.header, end.text, end.calls, end.finish_reason, lp, r));
}

}  // namespace pg
