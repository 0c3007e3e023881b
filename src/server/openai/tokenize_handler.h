// POST /tokenize: the token ids a request's prompt becomes, as vLLM's and
// llama.cpp's servers answer it. The body is one of
//   {"messages": [...], "tools"?: [...], ...}  a chat request (any chat
//       completion body): rendered through the chat template and tokenized
//       exactly as /v1/chat/completions would
//   {"prompt": "text" | [ids], ...}           a completions body, as
//       /v1/completions would (text: BOS added as the model says)
//   {"content": "text", "add_special"?: false} llama.cpp's form
// and the answer is {"tokens": [...], "count": N, "max_model_len": n_ctx}.
// `prosgrow route` uses it to find a request's cached prefix on each replica.
// Errors are the chat/completions errors (OpenAI JSON, 4xx).
// Thread-safety: as CompletionHandler (any HTTP thread).
#pragma once

#include <httplib.h>

#include "server/core/handler_context.h"
#include "server/openai/openai_error.h"

namespace pg {

void HandleTokenize(const HandlerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace pg
