// HandlerContext: what every HTTP handler of the server shares (the engine
// behind InferenceService, the chat template, metrics, the shutdown flag and
// the request limits), handed to each handler by HttpServer::SetUpRoutes.
//
// Thread-safety: a plain value of pointers to thread-safe objects; copied
// into handlers and read concurrently by HTTP threads.
#pragma once

#include <atomic>
#include <functional>

#include "engine/inference_service.h"
#include "server/common/request_limits.h"
#include "server/core/chat_prompt.h"
#include "server/core/server_metrics.h"

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

}  // namespace pg
