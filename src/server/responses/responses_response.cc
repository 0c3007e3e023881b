#include "server/responses/responses_response.h"

#include "server/common/api_error.h"
#include "server/core/json_text.h"
#include "server/core/response_id.h"

namespace pg {
namespace {

using json = nlohmann::json;

json MessageItem(const std::string& id, const std::string& status, const std::string& text, bool with_part) {
  json item = {{"type", "message"}, {"id", id}, {"status", status}, {"role", "assistant"}, {"content", json::array()}};
  if (with_part) {
    item["content"].push_back(
        {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", json::array()}});
  }
  return item;
}

json CallItem(const std::string& call_id, const std::string& name, const std::string& arguments,
              const std::string& status, const json& namespaces) {
  // The item id is the call id with fc_ in place of call_: one id per call, stable across forms.
  std::string id = "fc_" + (call_id.rfind("call_", 0) == 0 ? call_id.substr(5) : call_id);
  json item = {{"type", "function_call"}, {"id", id},        {"call_id", call_id}, {"name", name},
               {"arguments", arguments},  {"status", status}};
  if (namespaces.contains(name)) item["namespace"] = namespaces[name];
  return item;
}

}  // namespace

json ResponsesUsageJson(const GenerationResult& r) {
  return {{"input_tokens", r.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", r.cache.cached_tokens}}},
          {"output_tokens", r.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", r.prompt_tokens + r.completion_tokens}};
}

json ResponsesOutputItems(const std::string& text, const std::vector<ToolCall>& calls, const json& namespaces) {
  json items = json::array();
  if (!text.empty() || calls.empty()) items.push_back(MessageItem(NewResponseId("msg_"), "completed", text, true));
  for (const ToolCall& c : calls) items.push_back(CallItem(c.id, c.name, c.arguments_json, "completed", namespaces));
  return items;
}

json ResponsesObjectJson(const ResponsesHeader& h, const std::string& status, const json& output, const json& usage,
                         const std::string& finish_reason) {
  json o = {{"id", h.id},       {"object", "response"}, {"created_at", h.created_at},
            {"status", status}, {"error", nullptr},     {"incomplete_details", nullptr},
            {"model", h.model}, {"output", output},     {"usage", usage}};
  if (finish_reason == "length") o["incomplete_details"] = {{"reason", "max_output_tokens"}};
  for (auto it = h.echo.begin(); it != h.echo.end(); ++it) o[it.key()] = it.value();
  return o;
}

json ResponsesOutputAsMessages(const json& output) {
  json messages = json::array();
  json assistant = {{"role", "assistant"}, {"content", ""}};
  for (const json& item : output) {
    if (item.value("type", "") == "message") {
      for (const json& part : item["content"])
        assistant["content"] = assistant["content"].get<std::string>() + part.value("text", "");
    } else if (item.value("type", "") == "function_call") {
      json args = json::parse(item.value("arguments", ""), nullptr, false);
      if (args.is_discarded()) args = item.value("arguments", "");
      if (!assistant.contains("tool_calls")) assistant["tool_calls"] = json::array();
      assistant["tool_calls"].push_back({{"id", item["call_id"]},
                                         {"type", "function"},
                                         {"function", {{"name", item["name"]}, {"arguments", std::move(args)}}}});
    }
  }
  messages.push_back(std::move(assistant));
  return messages;
}

std::string ResponsesStreamWriter::Event(json event) {
  event["sequence_number"] = sequence_++;
  const std::string type = event["type"].get<std::string>();
  return "event: " + type + "\ndata: " + DumpJson(event) + "\n\n";
}

// Events are appended one statement at a time: each takes the next
// sequence_number, and the operands of + are evaluated in no fixed order.
std::string ResponsesStreamWriter::Start() {
  json object = ResponsesObjectJson(h_, "in_progress", json::array(), nullptr);
  std::string out = Event({{"type", "response.created"}, {"response", object}});
  out += Event({{"type", "response.in_progress"}, {"response", object}});
  return out;
}

std::string ResponsesStreamWriter::OpenMessage() {
  open_ = MessageItem(NewResponseId("msg_"), "in_progress", "", false);
  text_.clear();
  const int64_t index = static_cast<int64_t>(output_.size());
  json part = {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}, {"logprobs", json::array()}};
  std::string out = Event({{"type", "response.output_item.added"}, {"output_index", index}, {"item", open_}});
  out += Event({{"type", "response.content_part.added"},
                {"item_id", open_["id"]},
                {"output_index", index},
                {"content_index", 0},
                {"part", part}});
  return out;
}

std::string ResponsesStreamWriter::Close() {
  if (open_.is_null()) return "";
  const int64_t index = static_cast<int64_t>(output_.size());
  std::string out;
  json item = open_;
  item["status"] = "completed";
  if (open_["type"] == "message") {
    json part = {{"type", "output_text"}, {"text", text_}, {"annotations", json::array()}, {"logprobs", json::array()}};
    out += Event({{"type", "response.output_text.done"},
                  {"item_id", open_["id"]},
                  {"output_index", index},
                  {"content_index", 0},
                  {"text", text_},
                  {"logprobs", json::array()}});
    out += Event({{"type", "response.content_part.done"},
                  {"item_id", open_["id"]},
                  {"output_index", index},
                  {"content_index", 0},
                  {"part", part}});
    item["content"] = json::array({part});
  } else {
    item["arguments"] = text_;
    out += Event({{"type", "response.function_call_arguments.done"},
                  {"item_id", open_["id"]},
                  {"output_index", index},
                  {"name", open_["name"]},
                  {"arguments", text_}});
  }
  out += Event({{"type", "response.output_item.done"}, {"output_index", index}, {"item", item}});
  output_.push_back(std::move(item));
  open_ = nullptr;
  text_.clear();
  return out;
}

std::string ResponsesStreamWriter::Delta(const json& delta) {
  std::string out;
  if (delta.contains("content") && delta["content"].is_string()) {
    const std::string text = delta["content"].get<std::string>();
    if (text.empty()) return out;
    if (open_.is_null() || open_["type"] != "message") {
      out += Close();
      out += OpenMessage();
    }
    text_ += text;
    out += Event({{"type", "response.output_text.delta"},
                  {"item_id", open_["id"]},
                  {"output_index", static_cast<int64_t>(output_.size())},
                  {"content_index", 0},
                  {"delta", text},
                  {"logprobs", json::array()}});
    return out;
  }
  if (!delta.contains("tool_calls")) return out;
  for (const json& call : delta["tool_calls"]) {
    const json& fn = call.value("function", json::object());
    if (call.contains("id")) {  // a call starts
      out += Close();
      open_ = CallItem(call["id"].get<std::string>(), fn.value("name", ""), "", "in_progress", h_.namespaces);
      text_.clear();
      out += Event({{"type", "response.output_item.added"},
                    {"output_index", static_cast<int64_t>(output_.size())},
                    {"item", open_}});
    }
    const std::string args = fn.value("arguments", "");
    if (args.empty() || open_.is_null()) continue;
    text_ += args;
    out += Event({{"type", "response.function_call_arguments.delta"},
                  {"item_id", open_["id"]},
                  {"output_index", static_cast<int64_t>(output_.size())},
                  {"delta", args}});
  }
  return out;
}

std::string ResponsesStreamWriter::Finish(const std::string& finish_reason, const json& usage) {
  std::string out = Close();
  if (output_.empty()) {  // a response always has its message, even empty
    out += OpenMessage();
    out += Close();
  }
  const bool cut = finish_reason == "length";
  json object = ResponsesObjectJson(h_, cut ? "incomplete" : "completed", output_, usage, finish_reason);
  out += Event({{"type", cut ? "response.incomplete" : "response.completed"}, {"response", object}});
  return out;
}

std::string ResponsesStreamWriter::Fail(const ApiError& error) {
  std::string out = Close();
  json object = ResponsesObjectJson(h_, "failed", output_, nullptr);
  object["error"] = {{"code", error.code.empty() ? "server_error" : error.code}, {"message", error.message}};
  out += Event({{"type", "response.failed"}, {"response", object}});
  return out;
}

}  // namespace pg
