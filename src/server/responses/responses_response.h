// Responses API output: the response object of POST /v1/responses and its
// event stream, as the openai SDK (ResponseStreamEvent) and Codex parse them.
//
// A streamed response is one SSE event per line pair ("event: <type>",
// "data: <json with the same type and a sequence_number>"):
//   response.created, response.in_progress
//   per output item, in order:
//     message:       response.output_item.added, response.content_part.added,
//                    response.output_text.delta..., response.output_text.done,
//                    response.content_part.done, response.output_item.done
//     function_call: response.output_item.added, response.function_call_arguments.delta...,
//                    response.function_call_arguments.done, response.output_item.done
//   response.completed (or response.incomplete when max_output_tokens cut it;
//   response.failed when generation failed)
// The writer takes the chat deltas ToolCallDeltas builds ({"content"} and
// {"tool_calls": [...]}) and turns them into these events.
//
// Pure functions and a per-response writer; thread-safe as values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/common/api_error.h"
#include "server/core/generation_output.h"
#include "server/core/generation_runner.h"
#include "server/core/json_text.h"

namespace pg {

// What every form of one response repeats.
struct ResponsesHeader {
  std::string id;  // "resp_..."
  std::string model;
  int64_t created_at = 0;
  nlohmann::json echo;  // request fields the object repeats: instructions, tools, tool_choice, text, ...
  nlohmann::json namespaces = nlohmann::json::object();  // function name -> tool namespace
};

// {"input_tokens", "input_tokens_details": {"cached_tokens"}, "output_tokens",
//  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens"}.
nlohmann::json ResponsesUsageJson(const GenerationResult& r);

// Output items of a finished generation: a message (when there is text) then
// one function_call per call.
nlohmann::json ResponsesOutputItems(const std::string& text, const std::vector<ToolCall>& calls,
                                    const nlohmann::json& namespaces = nlohmann::json::object());

// The response object. status "in_progress" | "completed" | "incomplete" |
// "failed"; finish_reason "length" gives incomplete_details max_output_tokens.
nlohmann::json ResponsesObjectJson(const ResponsesHeader& h, const std::string& status, const nlohmann::json& output,
                                   const nlohmann::json& usage, const std::string& finish_reason = "");

// The output items as chat messages (what previous_response_id replays).
nlohmann::json ResponsesOutputAsMessages(const nlohmann::json& output);

class ResponsesStreamWriter {
 public:
  explicit ResponsesStreamWriter(ResponsesHeader h) : h_(std::move(h)) {}

  std::string Start();
  // One chat delta: {"content": text} or {"tool_calls": [...]} (tool_call_chunks.h).
  std::string Delta(const nlohmann::json& delta);
  // Closes the open item and ends with completed / incomplete.
  std::string Finish(const std::string& finish_reason, const nlohmann::json& usage);
  // A failed generation: response.failed.
  std::string Fail(const ApiError& error);

  const nlohmann::json& output() const { return output_; }

 private:
  std::string Event(nlohmann::json event);
  std::string Close();  // ends the open item, if any
  std::string OpenMessage();

  ResponsesHeader h_;
  int64_t sequence_ = 0;
  nlohmann::json output_ = nlohmann::json::array();  // items done so far
  nlohmann::json open_;                              // the item being streamed, or null
  std::string text_;                                 // open message's text / call's arguments
};

}  // namespace pg
