// ParseChatRequest: the /v1/chat/completions body (see openai_request.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/bounded_json.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/hosted_tools.h"
#include "server/core/json_string_at.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"
#include "server/openai/openai_fields.h"
#include "server/openai/openai_request.h"
#include "server/openai/response_format_request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// Chat fields that shape the output beyond sampling. What is implemented is
// honoured; what is not is a 400, never ignored. The constraints they imply
// are compiled later (server/core/output_constraint_request.h: schema keywords,
// the tool named by tool_choice).
//   response_format (and llama.cpp's / vLLM's schema fields):
//     server/core/response_format_request.h, as on completions.
//   tool_choice: "auto" (default), "none" (the tools are neither rendered
//     nor parsed), "required" (some call must be made) or
//     {"type": "function", "function": {"name": ...}} (that call).
//   parallel_tool_calls: false keeps only the first parsed call.
//   functions / function_call (the API's deprecated form): use 'tools'.
void ReadToolChoice(const json& tc, FieldReader& r, ApiRequest* req) {
  if (tc.is_string()) {
    if (tc == "auto")
      req->tool_choice = ApiRequest::ToolChoice::kAuto;
    else if (tc == "none")
      req->tool_choice = ApiRequest::ToolChoice::kNone;
    else if (tc == "required")
      req->tool_choice = ApiRequest::ToolChoice::kRequired;
    else
      r.Fail(BadRequest(fmt::format("'tool_choice' {} is not one of \"auto\", \"none\", \"required\" or "
                                    "{{\"type\": \"function\", \"function\": {{\"name\": ...}}}}",
                                    tc.dump()),
                        "tool_choice"));
    return;
  }
  if (!tc.is_object()) {
    r.WrongType("tool_choice", "a string or an object", tc);
    return;
  }
  auto type = tc.find("type");
  auto fn = tc.find("function");
  if (type == tc.end() || *type != "function" || fn == tc.end() || !fn->is_object() || !fn->contains("name") ||
      !(*fn)["name"].is_string()) {
    r.Fail(BadRequest("'tool_choice' as an object must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
                      "tool_choice"));
    return;
  }
  req->tool_choice = ApiRequest::ToolChoice::kNamed;
  req->tool_choice_name = (*fn)["name"].get<std::string>();
}

void ReadOutputControls(FieldReader& r, ApiRequest* req) {
  ReadOutputFormat(r, req);
  if (const json* tc = r.Get("tool_choice")) ReadToolChoice(*tc, r, req);
  bool parallel = true;
  if (r.Bool("parallel_tool_calls", &parallel)) req->parallel_tool_calls = parallel;
  for (const char* key : {"functions", "function_call"}) {
    if (r.Get(key)) {
      r.Fail(BadRequest(fmt::format("'{}' is the deprecated form of tools; send 'tools' (and 'tool_choice')", key), key,
                        "unsupported_parameter"));
    }
  }
}

// Chat content: a string, null, or an array of {"type": "text", "text": ...} parts.
bool NormaliseContent(json& msg, size_t index, FieldReader& r) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null() || it->is_string()) return true;
  std::string param = fmt::format("messages[{}].content", index);
  if (!it->is_array()) return r.WrongType(param.c_str(), "a string or an array of content parts", *it);
  std::string joined;
  for (const json& part : *it) {
    if (!part.is_object()) return r.WrongType(param.c_str(), "an array of content-part objects", part);
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) {
      r.Fail(BadRequest(fmt::format("{}: every part needs a string 'type'", param), param));
      return false;
    }
    if (*type != "text") {
      r.Fail(BadRequest(
          fmt::format("{}: content part type '{}' is not supported (text only)", param, type->get<std::string>()),
          param));
      return false;
    }
    auto text = part.find("text");
    if (text == part.end() || !text->is_string()) {
      r.Fail(BadRequest(fmt::format("{}: a text part needs a string 'text'", param), param));
      return false;
    }
    joined += text->get<std::string>();
  }
  *it = joined;
  return true;
}

bool NormaliseToolCalls(json& msg, size_t index, FieldReader& r) {
  auto it = msg.find("tool_calls");
  if (it == msg.end() || it->is_null()) return true;
  std::string param = fmt::format("messages[{}].tool_calls", index);
  if (!it->is_array()) return r.WrongType(param.c_str(), "an array", *it);
  for (json& call : *it) {
    if (!call.is_object()) return r.WrongType(param.c_str(), "an array of objects", call);
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
      r.Fail(BadRequest(fmt::format("{}: each call needs a 'function' object with a string 'name'", param), param));
      return false;
    }
    // Templates expect arguments as an object; the API carries a JSON string.
    auto args = fn->find("arguments");
    if (args != fn->end() && args->is_string()) {
      json parsed = ParseBoundedOrDiscard(args->get<std::string>());
      if (!parsed.is_discarded()) *args = std::move(parsed);
    }
  }
  return true;
}

// chat_template_kwargs: an object of extra template variables. The names the
// renderer sets itself are refused rather than silently dropped.
void ReadTemplateKwargs(FieldReader& r, ApiRequest* req) {
  const json* kw = r.GetObject("chat_template_kwargs");
  if (!kw) return;
  for (const char* own : {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"}) {
    if (kw->contains(own)) {
      r.Fail(
          BadRequest(fmt::format("'chat_template_kwargs' may not set '{}': the server sets it from the request", own),
                     "chat_template_kwargs"));
      return;
    }
  }
  req->template_kwargs = *kw;
}

// logprobs and top_logprobs (which needs logprobs).
void ReadLogprobs(FieldReader& r, ApiRequest* req) {
  bool logprobs = false;
  r.Bool("logprobs", &logprobs);
  int64_t top = 0;
  if (r.Int("top_logprobs", &top)) {
    if (top < 0 || top > kMaxTopLogprobs) {
      r.Fail(
          BadRequest(fmt::format("'top_logprobs' must be in [0, {}], got {}", kMaxTopLogprobs, top), "top_logprobs"));
    } else if (top > 0 && !logprobs) {
      r.Fail(BadRequest("'top_logprobs' requires 'logprobs': true", "top_logprobs"));
    }
  }
  req->sampling.logprobs = logprobs;
  req->sampling.top_logprobs = logprobs ? static_cast<int>(top) : 0;
}

// One entry of messages (m = messages[i]): checks its role, content and tool
// fields and normalises them in place. False (and r failed) when it is wrong.
bool CheckMessage(json& m, size_t i, FieldReader& r) {
  std::string param = fmt::format("messages[{}]", i);
  if (!m.is_object()) return r.WrongType(param.c_str(), "an object", m);
  auto role = m.find("role");
  if (role == m.end() || !role->is_string()) {
    r.Fail(BadRequest(fmt::format("{} needs a string 'role'", param), param + ".role"));
    return false;
  }
  const std::string rs = role->get<std::string>();
  if (rs != "system" && rs != "user" && rs != "assistant" && rs != "tool" && rs != "developer") {
    r.Fail(BadRequest(fmt::format("{}.role '{}' is not one of system, developer, user, assistant, tool", param, rs),
                      param + ".role", "invalid_role"));
    return false;
  }
  if (!NormaliseContent(m, i, r) || !NormaliseToolCalls(m, i, r)) return false;
  if (rs == "tool") {
    auto id = m.find("tool_call_id");
    if (id == m.end() || !id->is_string() || id->get<std::string>().empty()) {
      r.Fail(BadRequest(fmt::format("{} (tool) needs a non-empty string 'tool_call_id': the id of the call it "
                                    "answers",
                                    param),
                        param + ".tool_call_id"));
      return false;
    }
  }
  bool has_content = m.contains("content") && m["content"].is_string();
  bool has_calls = m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
  if (!has_content && !(rs == "assistant" && has_calls)) {
    r.Fail(BadRequest(fmt::format("{} ({}) needs 'content'", param, rs), param + ".content"));
    return false;
  }
  if (m.contains("content") && m["content"].is_null()) m["content"] = "";
  return true;
}

// messages: required, a non-empty array of at most limits.max_messages.
void ReadMessages(FieldReader& r, const RequestLimits& limits, ApiRequest* req) {
  const json* messages = r.Get("messages");
  if (!messages) {
    r.Fail(BadRequest("'messages' is required", "messages"));
  } else if (!messages->is_array()) {
    r.WrongType("messages", "an array", *messages);
  } else if (messages->empty()) {
    r.Fail(BadRequest("'messages' must not be empty", "messages"));
  } else if (messages->size() > static_cast<size_t>(limits.max_messages)) {
    r.Fail(BadRequest(fmt::format("'messages' has {} entries, more than the limit of {} (--max-messages)",
                                  messages->size(), limits.max_messages),
                      "messages", "too_many_messages"));
  } else {
    req->messages = *messages;
    for (size_t i = 0; i < req->messages.size() && !r.failed(); ++i) {
      if (!CheckMessage(req->messages[i], i, r)) break;
    }
  }
}

// One entry of tools, tools[i]: {"type": "function" (may be left out),
// "function": {"name": non-empty and not declared before, "description":
// string, "parameters": object, "strict": boolean}}. False (and r failed)
// when it is wrong.
bool CheckTool(const json& t, size_t i, std::set<std::string>* names, FieldReader& r) {
  const std::string where = fmt::format("tools[{}]", i);
  const json* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
  auto type = t.is_object() ? t.find("type") : t.end();
  const bool typed = !t.is_object() || type == t.end() || type->is_null() || *type == "function";
  if (!typed || !fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
    r.Fail(BadRequest(where + " must be {\"type\": \"function\", \"function\": {\"name\": ...}} (function tools only)",
                      where));
    return false;
  }
  const std::string name = (*fn)["name"].get<std::string>();
  if (name.empty() || !names->insert(name).second) {
    r.Fail(BadRequest(name.empty() ? where + ".function.name must not be empty"
                                   : fmt::format("{}.function.name: tool '{}' is declared twice", where, name),
                      where + ".function.name"));
    return false;
  }
  auto wrong = [&](const char* key, bool (*ok)(const json&), const char* expected) {
    auto v = fn->find(key);
    if (v == fn->end() || v->is_null() || ok(*v)) return false;
    r.Fail(BadRequest(fmt::format("{}.function.{} must be {}, got {}", where, key, expected, JsonTypeName(*v)),
                      fmt::format("{}.function.{}", where, key), "invalid_type"));
    return true;
  };
  return !wrong(
             "description", [](const json& v) { return v.is_string(); }, "a string") &&
         !wrong(
             "parameters", [](const json& v) { return v.is_object(); }, "a JSON schema object") &&
         !wrong(
             "strict", [](const json& v) { return v.is_boolean(); }, "a boolean");
}

// tools: function declarations, kept unless tool_choice is "none". Hosted
// tool declarations (hosted_tools.h) are not offered: named in skipped_tools.
void ReadTools(FieldReader& r, const RequestLimits& limits, ApiRequest* req) {
  const json* tools =
      r.GetSized({"tools", false, "an array", "entries", limits.max_tools, "--max-tools", "too_many_tools"});
  if (!tools) return;
  std::set<std::string> names;
  json offered = json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const json& t = (*tools)[i];
    if (const std::string type = StringAt(t, "type"); IsHostedToolType(type)) {
      req->skipped_tools.push_back(type);
      continue;
    }
    if (!CheckTool(t, i, &names, r)) return;
    offered.push_back(t);
  }
  if (!offered.empty() && req->tool_choice != ApiRequest::ToolChoice::kNone) req->tools = std::move(offered);
}

}  // namespace

ApiResult<ApiRequest> ParseChatRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                       const RequestLimits& limits, std::initializer_list<const char*> also_read) {
  FieldReader r(body);
  ApiRequest req;
  req.chat = true;
  ReadCommonFields(r, n_vocab, n_ctx, limits, &req);
  ReadLogprobs(r, &req);
  ReadOutputControls(r, &req);
  ReadTemplateKwargs(r, &req);
  ReadMessages(r, limits, &req);
  if (!r.failed()) {
    if (std::optional<OrphanToolResult> o = FirstOrphanToolResult(req.messages)) {
      r.Fail(BadRequest(fmt::format("messages[{}] (tool): tool_call_id '{}' answers no tool call of an earlier "
                                    "assistant message",
                                    o->index, o->tool_call_id),
                        fmt::format("messages[{}].tool_call_id", o->index), "unknown_tool_call_id"));
    }
  }
  ReadTools(r, limits, &req);
  CheckFieldNames(r, body, OpenAiRoute::kChat, also_read);
  if (r.failed()) return r.error();
  return req;
}
}  // namespace pg
