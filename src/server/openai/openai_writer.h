// OpenAiWriter: the ResponseWriter of /v1/chat/completions and
// /v1/completions (response_writer.h): chat.completion / text_completion
// bodies, or their SSE chunks (a role chunk first for chat, content and
// tool-call deltas as they form, a finish chunk, the usage chunk when
// stream_options.include_usage, then "data: [DONE]"), with OpenAI's errors.
//
// Not thread-safe; one per response.
#pragma once

#include <string>

#include "server/common/api_error.h"
#include "server/core/response_writer.h"
#include "server/openai/openai_response.h"
#include "tokenizer/tokenizer.h"

namespace pg {

struct OpenAiWriterOptions {
  ResponseHeader header;
  bool include_usage = false;  // streamed: the final usage chunk
  bool logprobs = false;
};

class OpenAiWriter final : public ResponseWriter {
 public:
  OpenAiWriter(OpenAiWriterOptions options, const Tokenizer& tok) : o_(std::move(options)), tok_(tok) {}

  const std::string& id() const override { return o_.header.id; }
  std::string StreamStart(const GenerationResult& r) override;
  std::string StreamStep(const WriterStep& step) override;
  std::string StreamEnd(const WriterStep& step, const GenerationEnd& end, const GenerationResult& r) override;
  std::string StreamError(const ApiError& error) override;
  std::string Body(const GenerationEnd& end, const std::vector<TokenEvent>& tokens, const GenerationResult& r) override;

 private:
  std::string Chunk(const nlohmann::json& delta, const nlohmann::json& logprobs) const;
  nlohmann::json Logprobs(const std::vector<TokenEvent>& tokens);
  // Content and tool-call deltas in order; the step's logprobs ride on its
  // first content delta (or an empty one).
  std::string Deltas(const std::vector<nlohmann::json>& deltas, const std::vector<TokenEvent>& tokens);

  OpenAiWriterOptions o_;
  const Tokenizer& tok_;
  int64_t text_offset_ = 0;  // completions logprobs text_offset
};

}  // namespace pg
