// TemplateHandler: POST /apply-template, as llama.cpp's server has it.
//
//   request:  {"messages": [...], "tools": [...]?, "add_generation_prompt": bool? (default true),
//              any other /v1/chat/completions field}
//   response: {"prompt": "<the text the chat template renders>"}
//
// The body is validated exactly as a chat request (ParseChatRequest: roles,
// content parts, tool calls, tools, tool_choice "none" dropping the tools,
// limits), so the prompt is the very text /v1/chat/completions would
// tokenize for the same body (with add_generation_prompt true). Every
// problem is an OpenAI-style 400; a model still loading is a 503. Like the
// /v1/* routes (and llama.cpp, whose only open routes are health and the
// model list) it sits behind the API key.
//
// Thread-safety: Handle() runs concurrently on HTTP threads; the handler
// holds only pointers to thread-safe objects.
#pragma once

#include <httplib.h>

#include "server/core/handler_context.h"
#include "server/openai/openai_error.h"

namespace pg {

class TemplateHandler {
 public:
  explicit TemplateHandler(HandlerContext ctx) : ctx_(ctx) {}
  void Handle(const httplib::Request& req, httplib::Response& res) const;

 private:
  HandlerContext ctx_;
};

}  // namespace pg
