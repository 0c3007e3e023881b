// ResponseWriter: one generation response in its API's words. The shared
// path (generation_handler.h) runs the generation and hands the writer what
// became visible; the writer only formats. OpenAI's chat and completions
// (openai_writer.h) and Anthropic's Messages (anthropic_writer.h) implement it.
//
// A stream is StreamStart, StreamStep* and StreamEnd (or StreamError when the
// engine fails); each returns the bytes to send ("" = nothing). A
// non-streamed response is one Body.
//
// Not thread-safe; one per response, used by the HTTP thread serving it.
#pragma once

#include <string>
#include <vector>

#include "server/common/api_error.h"
#include "server/core/generation_output.h"

namespace pg {

// What became visible to a stream: `events` are GenerationOutput's (Push's on
// a step, Finish's at the end), `tokens` the step's tokens (none at the end),
// `out` the output they were folded into (call ids, arguments so far).
struct WriterStep {
  const std::vector<ToolCallEvent>& events;
  const std::vector<TokenEvent>& tokens;
  const GenerationOutput& out;
};

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // The response's id ("chatcmpl-...", "cmpl-...", "msg_..."), also the engine request's.
  virtual const std::string& id() const = 0;

  // True when StreamStart needs the prompt admitted (its cache split known):
  // the stream then opens with the first token, or the finish.
  virtual bool StartNeedsAdmission() const { return false; }
  virtual std::string StreamStart(const GenerationResult& r) = 0;
  virtual std::string StreamStep(const WriterStep& step) = 0;
  virtual std::string StreamEnd(const WriterStep& step, const GenerationEnd& end, const GenerationResult& r) = 0;
  virtual std::string StreamError(const ApiError& error) = 0;

  // The whole non-streamed body (JSON); `tokens` for logprobs.
  virtual std::string Body(const GenerationEnd& end, const std::vector<TokenEvent>& tokens,
                           const GenerationResult& r) = 0;
};

}  // namespace pg
