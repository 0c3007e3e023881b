// CompletionHandler: serves POST /v1/chat/completions and /v1/completions.
//
// Both are OpenAI dialects (generation_handler.h) of the one generation
// path: the body is validated into an ApiRequest (core/request.h; openai_request.h parses it), the chat
// template renders the messages (or the completion prompt is tokenized as
// given), and an OpenAiWriter (openai_writer.h) answers with one JSON body or
// SSE chunks. A client that disconnects (streaming or not) gets its request
// cancelled in the engine.
//
// Thread-safety: Handle() runs concurrently on many HTTP threads; the
// handler holds only pointers to thread-safe objects.
#pragma once

#include <httplib.h>

#include "server/core/handler_context.h"
#include "server/openai/openai_error.h"

namespace pg {

class CompletionHandler {
 public:
  explicit CompletionHandler(HandlerContext ctx) : ctx_(ctx) {}
  void Handle(const httplib::Request& req, httplib::Response& res, bool chat) const;

 private:
  HandlerContext ctx_;
};

}  // namespace pg
