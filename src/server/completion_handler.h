// CompletionHandler: serves POST /v1/chat/completions and /v1/completions.
//
// On the HTTP worker thread: parse and validate the body (api_request.h),
// render the chat template (chat_prompt.h), tokenize, check the context,
// submit through a GenerationRunner, then either stream SSE chunks as
// tokens arrive (httplib chunked content provider) or wait and answer one
// JSON body. A client that disconnects (streaming or not) gets its request
// cancelled in the engine.
//
// Thread-safety: Handle() runs concurrently on many HTTP threads; the
// handler holds only pointers to thread-safe objects.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>

#include "engine/inference_service.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/request_limits.h"
#include "server/server_metrics.h"

namespace pg {

struct HandlerContext {
  InferenceService* service = nullptr;
  // The chat template, built on first use (the model may still be loading
  // when the server starts). Never returns null.
  std::function<const ChatPrompt*()> chat;
  ServerMetrics* metrics = nullptr;
  const std::atomic<bool>* stopping = nullptr;  // set when the server shuts down
  RequestLimits limits;                         // what one request may contain
};

// Writes `error` as the response (status + OpenAI error JSON) and counts it.
void SendApiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);

class CompletionHandler {
 public:
  explicit CompletionHandler(HandlerContext ctx) : ctx_(ctx) {}
  void Handle(const httplib::Request& req, httplib::Response& res, bool chat) const;

 private:
  HandlerContext ctx_;
};

}  // namespace pg
