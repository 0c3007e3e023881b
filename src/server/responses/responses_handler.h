// ResponsesHandler: serves POST /v1/responses (OpenAI's Responses API) as
// one more ApiDialect on the shared generation path (generation_handler.h):
//
//   body -> ParseResponsesRequest (responses_request.h) -> the chat ApiRequest
//   -> previous_response_id resolved in the ResponseStore (the caller's
//   tenant's) -> chat template + tokenize -> HandleGeneration's steps
//   -> ResponsesWriter: the response object or its event stream
//   (responses_response.h) -> stored when `store` is true.
//
// Errors use the Responses API's shape (responses_error.h). Fields accepted without effect
// are named in the x-prosgrow-ignored-fields header and the log.
//
// Thread-safety: Create() runs concurrently on HTTP threads; the store locks.
#pragma once

#include <httplib.h>

#include <memory>

#include "server/core/handler_context.h"
#include "server/responses/responses_store.h"

namespace pg {

class ResponsesHandler {
 public:
  ResponsesHandler(HandlerContext ctx, size_t store_capacity)
      : ctx_(std::move(ctx)), store_(std::make_shared<ResponseStore>(store_capacity)) {}
  void Create(const httplib::Request& req, httplib::Response& res) const;

 private:
  HandlerContext ctx_;
  std::shared_ptr<ResponseStore> store_;
};

}  // namespace pg
