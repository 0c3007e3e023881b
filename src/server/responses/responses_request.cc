#include "server/responses/responses_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/bounded_json.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/hosted_tools.h"
#include "server/core/json_string_at.h"
#include "server/core/known_keys.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// Top-level fields; anything else is a 400 naming it.
constexpr const char* kFields[] = {"model",
                                   "input",
                                   "instructions",
                                   "tools",
                                   "tool_choice",
                                   "parallel_tool_calls",
                                   "max_output_tokens",
                                   "temperature",
                                   "top_p",
                                   "stream",
                                   "store",
                                   "previous_response_id",
                                   "prompt_cache_key",
                                   "user",
                                   "safety_identifier",
                                   "metadata",
                                   "reasoning",
                                   "include",
                                   "text",
                                   "truncation",
                                   "service_tier",
                                   "stream_options",
                                   "background",
                                   "top_logprobs",
                                   "max_tool_calls",
                                   "prompt_cache_retention",
                                   "client_metadata"};

ApiError Bad(const std::string& param, const std::string& message, const char* code = "") {
  return BadRequest(param + ": " + message, param, code);
}

// obj[key], when present and not null, must pass `is` (a json::is_* test).
std::optional<ApiError> OptionalOfType(const json& obj, const char* key, const std::string& where,
                                       bool (json::*is)() const noexcept, const char* expected) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() || ((*it).*is)()) return std::nullopt;
  return Bad(where + "." + key, fmt::format("must be {}, got {}", expected, JsonTypeName(*it)), "invalid_type");
}

// obj[key], when present and not null, must be one of `values`.
std::optional<ApiError> OptionalOneOf(const json& obj, const char* key, const std::string& where,
                                      std::initializer_list<const char*> values) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  std::string list;
  for (const char* v : values) {
    if (*it == v) return std::nullopt;
    list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", v);
  }
  return Bad(where + "." + key,
             fmt::format("must be one of {}, got {}", list, it->is_string() ? it->dump() : JsonTypeName(*it)));
}

// A message's content: a string, or parts of type input_text / output_text / text.
std::optional<ApiError> ContentText(const json& content, const std::string& where, std::string* out) {
  if (content.is_string()) {
    *out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return Bad(where, "must be a string or an array of content parts", "invalid_type");
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string pw = fmt::format("{}[{}]", where, i);
    std::string type = StringAt(part, "type");
    if (type != "input_text" && type != "output_text" && type != "text" && type != "refusal") {
      return Bad(pw + ".type", fmt::format("content part type '{}' is not supported (input_text, output_text)", type),
                 "unsupported_content");
    }
    const char* key = type == "refusal" ? "refusal" : "text";
    if (!part.contains(key) || !part[key].is_string())
      return Bad(pw + "." + key, "a string is required", "invalid_type");
    *out += part[key].get<std::string>();
  }
  return std::nullopt;
}

// Builds chat messages from items, one at a time.
class InputConverter {
 public:
  explicit InputConverter(json* messages) : messages_(messages) {}

  std::optional<ApiError> Item(const json& item, size_t i) {
    const std::string where = fmt::format("input[{}]", i);
    if (!item.is_object()) return Bad(where, "must be an object", "invalid_type");
    std::string type = StringAt(item, "type", item.contains("role") ? "message" : "");
    if (type == "message") return Message(item, where);
    if (type == "function_call") return FunctionCall(item, where);
    if (type == "function_call_output") return FunctionOutput(item, where);
    if (type == "reasoning") return Reasoning(item, where);
    return Bad(where + ".type",
               fmt::format("input item type '{}' is not supported (message, function_call, function_call_output, "
                           "reasoning)",
                           type),
               "unsupported_input_item");
  }

 private:
  std::optional<ApiError> Message(const json& m, const std::string& where) {
    if (auto e = UnknownKey(m, {"type", "role", "content", "id", "status"}, where)) return e;
    std::string role = StringAt(m, "role");
    if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
      return Bad(where + ".role", fmt::format("must be user, assistant, system or developer, got \"{}\"", role),
                 "invalid_role");
    }
    if (role == "developer") role = "system";  // the templates know system, not developer
    if (!m.contains("content")) return Bad(where + ".content", "required");
    std::string text;
    if (auto e = ContentText(m["content"], where + ".content", &text)) return e;
    json msg = {{"role", role}, {"content", text}};
    if (role == "assistant") TakeReasoning(&msg);
    messages_->push_back(std::move(msg));
    return std::nullopt;
  }

  std::optional<ApiError> FunctionCall(const json& c, const std::string& where) {
    if (auto e = UnknownKey(c, {"type", "call_id", "name", "arguments", "id", "status", "namespace"}, where)) return e;
    for (const char* key : {"call_id", "name", "arguments"}) {
      if (!c.contains(key) || !c[key].is_string())
        return Bad(where + "." + key, "a string is required", "invalid_type");
    }
    json args = ParseBoundedOrDiscard(c["arguments"].get<std::string>());
    if (args.is_discarded()) args = c["arguments"];  // templates get the text when it is not JSON
    json call = {{"id", c["call_id"]},
                 {"type", "function"},
                 {"function", {{"name", c["name"]}, {"arguments", std::move(args)}}}};
    // Consecutive calls (and the assistant text before them) are one turn.
    if (messages_->empty() || messages_->back()["role"] != "assistant") {
      json msg = {{"role", "assistant"}, {"content", ""}};
      TakeReasoning(&msg);
      messages_->push_back(std::move(msg));
    }
    json& last = messages_->back();
    if (!last.contains("tool_calls")) last["tool_calls"] = json::array();
    last["tool_calls"].push_back(std::move(call));
    call_ids_.insert(c["call_id"].get<std::string>());
    return std::nullopt;
  }

  std::optional<ApiError> FunctionOutput(const json& o, const std::string& where) {
    if (auto e = UnknownKey(o, {"type", "call_id", "output", "id", "status"}, where)) return e;
    if (!o.contains("call_id") || !o["call_id"].is_string()) {
      return Bad(where + ".call_id", "a string is required", "invalid_type");
    }
    std::string text;
    if (!o.contains("output")) return Bad(where + ".output", "required");
    if (auto e = ContentText(o["output"], where + ".output", &text)) return e;
    messages_->push_back({{"role", "tool"}, {"tool_call_id", o["call_id"]}, {"content", text}});
    return std::nullopt;
  }

  // Reasoning items are replayed as reasoning_content of the next assistant
  // turn (templates that render earlier reasoning read it; others ignore it).
  std::optional<ApiError> Reasoning(const json& r, const std::string& where) {
    if (auto e = UnknownKey(r, {"type", "id", "summary", "content", "encrypted_content", "status"}, where)) return e;
    for (const char* key : {"summary", "content"}) {
      if (!r.contains(key) || r[key].is_null()) continue;
      if (!r[key].is_array()) return Bad(where + "." + key, "must be an array", "invalid_type");
      for (const json& part : r[key]) {
        if (part.is_object() && part.contains("text") && part["text"].is_string()) {
          reasoning_ += (reasoning_.empty() ? "" : "\n") + part["text"].get<std::string>();
        }
      }
    }
    return std::nullopt;
  }

  void TakeReasoning(json* msg) {
    if (reasoning_.empty()) return;
    (*msg)["reasoning_content"] = reasoning_;
    reasoning_.clear();
  }

  json* messages_;
  std::string reasoning_;
  std::set<std::string> call_ids_;
};

// One function tool -> its chat form; `where` names it in errors.
std::optional<ApiError> FunctionTool(const json& t, const std::string& where, std::set<std::string>* names,
                                     json* chat) {
  if (auto e = UnknownKey(t, {"type", "name", "description", "parameters", "strict"}, where)) return e;
  if (!t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty()) {
    return Bad(where + ".name", "a non-empty string is required", "invalid_type");
  }
  if (!names->insert(t["name"].get<std::string>()).second) {
    return Bad(where + ".name", fmt::format("tool '{}' is declared twice", t["name"].get<std::string>()));
  }
  if (auto e = OptionalOfType(t, "description", where, &json::is_string, "a string")) return e;
  if (auto e = OptionalOfType(t, "parameters", where, &json::is_object, "a JSON schema object")) return e;
  if (auto e = OptionalOfType(t, "strict", where, &json::is_boolean, "a boolean")) return e;
  json fn = {{"name", t["name"]}};
  if (t.contains("description") && t["description"].is_string()) fn["description"] = t["description"];
  fn["parameters"] =
      t.contains("parameters") && t["parameters"].is_object() ? t["parameters"] : json{{"type", "object"}};
  if (t.contains("strict") && t["strict"].is_boolean()) fn["strict"] = t["strict"];
  chat->push_back({{"type", "function"}, {"function", std::move(fn)}});
  return std::nullopt;
}

// tools: function tools, and namespaces of function tools (Codex groups
// some so), which are declared by their own names. Hosted tools
// (hosted_tools.h) are not offered to the model: they are named in
// api.skipped_tools and left out of the response's `tools`.
void ReadTools(FieldReader& r, const RequestLimits& limits, ResponsesRequest* out) {
  const json* tools =
      r.GetSized({"tools", false, "an array", "entries", limits.max_tools, "--max-tools", "too_many_tools"});
  if (!tools) return;
  json chat = json::array();
  json offered = json::array();
  std::set<std::string> names;
  for (size_t i = 0; i < tools->size(); ++i) {
    const json& t = (*tools)[i];
    const std::string where = fmt::format("tools[{}]", i);
    std::string type = StringAt(t, "type");
    if (IsHostedToolType(type)) {
      out->api.skipped_tools.push_back(type);
      continue;
    }
    offered.push_back(t);
    if (type == "namespace") {
      if (auto e = UnknownKey(t, {"type", "name", "description", "tools"}, where)) return r.Fail(*e);
      if (!t.contains("name") || !t["name"].is_string() || !t.contains("tools") || !t["tools"].is_array()) {
        return r.Fail(Bad(where, "a namespace needs a string 'name' and a 'tools' array", "invalid_type"));
      }
      for (size_t k = 0; k < t["tools"].size(); ++k) {
        const json& member = t["tools"][k];
        const std::string mw = fmt::format("{}.tools[{}]", where, k);
        if (StringAt(member, "type") != "function") {
          return r.Fail(Bad(mw + ".type", "a namespace holds function tools only", "unsupported_tool"));
        }
        if (auto e = FunctionTool(member, mw, &names, &chat)) return r.Fail(*e);
        out->namespaces[member["name"].get<std::string>()] = t["name"];
      }
      continue;
    }
    if (type != "function") return r.Fail(Bad(where + ".type", "must be \"function\"", "unsupported_tool"));
    if (auto e = FunctionTool(t, where, &names, &chat)) return r.Fail(*e);
  }
  out->echo["tools"] = std::move(offered);
  if (!chat.empty()) out->api.tools = std::move(chat);
}

void ReadToolChoice(FieldReader& r, ApiRequest* api) {
  const json* tc = r.Get("tool_choice");
  if (!tc) return;
  using TC = ApiRequest::ToolChoice;
  if (tc->is_string()) {
    if (*tc == "auto") return;
    if (*tc == "none") return (void)(api->tool_choice = TC::kNone);
    if (*tc == "required") return (void)(api->tool_choice = TC::kRequired);
    return r.Fail(
        BadRequest("'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                   "\"name\": ...}",
                   "tool_choice"));
  }
  if (!tc->is_object() || !tc->contains("type") || !(*tc)["type"].is_string()) {
    return (void)r.WrongType("tool_choice", "a string or an object with a 'type'", *tc);
  }
  const std::string type = (*tc)["type"].get<std::string>();
  if (type != "function") {
    const std::string why = IsHostedToolType(type) ? "forces a hosted tool, which this server does not run (hosted "
                                                     "tools are not offered to the model)"
                                                   : "is not a tool type this server runs; use \"function\"";
    return r.Fail(
        BadRequest(fmt::format("tool_choice.type: '{}' {}", type, why), "tool_choice.type", "unsupported_tool"));
  }
  if (!tc->contains("name") || !(*tc)["name"].is_string()) {
    return r.Fail(BadRequest("tool_choice.name: a string is required", "tool_choice.name"));
  }
  api->tool_choice = TC::kNamed;
  api->tool_choice_name = (*tc)["name"].get<std::string>();
}

// text: {format: {type: text | json_object | json_schema, ...}, verbosity}.
void ReadText(FieldReader& r, ResponsesRequest* out) {
  const json* text = r.GetObject("text");
  if (!text) return;
  if (auto e = UnknownKey(*text, {"format", "verbosity"}, "text")) return r.Fail(*e);
  out->echo["text"] = *text;
  if (text->contains("verbosity") && !(*text)["verbosity"].is_null())
    out->api.ignored_fields.push_back("text.verbosity");
  if (!text->contains("format") || (*text)["format"].is_null()) return;
  const json& f = (*text)["format"];
  std::string type = StringAt(f, "type");
  ApiRequest& api = out->api;
  if (f.is_object() && type != "json_schema") {
    if (auto e = UnknownKey(f, {"type"}, "text.format")) return r.Fail(*e);  // e.g. llama.cpp's json_object + schema
  } else if (f.is_object()) {
    if (auto e = UnknownKey(f, {"type", "name", "schema", "description", "strict"}, "text.format")) return r.Fail(*e);
    if (auto e = OptionalOfType(f, "name", "text.format", &json::is_string, "a string")) return r.Fail(*e);
    if (auto e = OptionalOfType(f, "description", "text.format", &json::is_string, "a string")) return r.Fail(*e);
    if (auto e = OptionalOfType(f, "strict", "text.format", &json::is_boolean, "a boolean")) return r.Fail(*e);
  }
  if (type == "text") return;
  if (type == "json_object") return api.SetJsonObjectFormat("text.format");
  if (type != "json_schema") {
    return r.Fail(BadRequest("text.format.type: must be text, json_object or json_schema", "text.format.type"));
  }
  if (!f.contains("schema") || !(f["schema"].is_object() || f["schema"].is_boolean())) {
    return r.Fail(BadRequest("text.format.schema: a JSON schema object is required", "text.format.schema"));
  }
  api.SetJsonSchemaFormat(f["schema"], StringAt(f, "name", "response"), "text.format.schema");
}

// reasoning: {effort, summary}. effort "none"/"minimal" turns the template's
// thinking switch off, any other effort on; without a switch it has no effect.
void ReadReasoning(FieldReader& r, bool thinking_switch, ApiRequest* api) {
  const json* reasoning = r.GetObject("reasoning");
  if (!reasoning) return;
  if (auto e = UnknownKey(*reasoning, {"effort", "summary", "generate_summary"}, "reasoning")) return r.Fail(*e);
  if (auto e =
          OptionalOneOf(*reasoning, "effort", "reasoning", {"none", "minimal", "low", "medium", "high", "xhigh"})) {
    return r.Fail(*e);
  }
  for (const char* key : {"summary", "generate_summary"}) {
    if (auto e = OptionalOneOf(*reasoning, key, "reasoning", {"auto", "concise", "detailed", "none"})) {
      return r.Fail(*e);
    }
  }
  if (reasoning->contains("effort") && (*reasoning)["effort"].is_string()) {
    const std::string effort = (*reasoning)["effort"].get<std::string>();
    if (thinking_switch) {
      api->template_kwargs = {{"enable_thinking", effort != "none" && effort != "minimal"}};
    } else {
      api->ignored_fields.push_back("reasoning.effort");
    }
  }
  for (const char* key : {"summary", "generate_summary"}) {
    if (reasoning->contains(key) && !(*reasoning)[key].is_null())
      api->ignored_fields.push_back(std::string("reasoning.") + key);
  }
}

void ReadSampling(FieldReader& r, int64_t n_ctx, ApiRequest* api) {
  int64_t max_tokens = 0;
  if (r.Int("max_output_tokens", &max_tokens)) {
    if (max_tokens < 1 || max_tokens > n_ctx) {
      r.Fail(BadRequest(
          fmt::format("'max_output_tokens' must be in [1, {}] (the model's context), got {}", n_ctx, max_tokens),
          "max_output_tokens"));
    }
    api->sampling.max_tokens = static_cast<int>(std::clamp<int64_t>(max_tokens, 1, 1 << 30));
    api->max_tokens_given = true;
  }
  double d = 0;
  if (r.Number("temperature", &d)) {
    if (d < 0 || d > 2) r.Fail(BadRequest(fmt::format("'temperature' must be in [0, 2], got {}", d), "temperature"));
    api->sampling.temperature = static_cast<float>(d);
  }
  if (r.Number("top_p", &d)) {
    if (!(d > 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'top_p' must be in (0, 1], got {}", d), "top_p"));
    api->sampling.top_p = static_cast<float>(d);
  }
}

// Fields whose only values are what this server does anyway, and fields
// accepted without effect (named in ignored_fields).
void ReadServingFields(FieldReader& r, ResponsesRequest* out) {
  ApiRequest& api = out->api;
  bool background = false;
  if (r.Bool("background", &background) && background) {
    r.Fail(BadRequest("'background' responses are not supported; send the request and read its answer", "background",
                      "unsupported_parameter"));
  }
  std::string truncation;
  if (r.String("truncation", &truncation) && truncation != "disabled") {
    r.Fail(BadRequest("'truncation' must be \"disabled\": this server does not drop input to fit the context",
                      "truncation"));
  }
  int64_t top_logprobs = 0;
  if (r.Int("top_logprobs", &top_logprobs) && top_logprobs != 0) {
    r.Fail(BadRequest("'top_logprobs' is not supported on /v1/responses (use /v1/chat/completions)", "top_logprobs",
                      "unsupported_parameter"));
  }
  if (const json* include = r.Get("include")) {
    if (!include->is_array()) return (void)r.WrongType("include", "an array of strings", *include);
    for (const json& i : *include) {
      if (!i.is_string()) return (void)r.WrongType("include", "an array of strings", i);
      api.ignored_fields.push_back("include:" + i.get<std::string>());
    }
  }
  // Without effect, but of the type OpenAI's API gives them.
  struct NoEffect {
    const char* key;
    bool (json::*is)() const noexcept;
    const char* expected;
  };
  for (const NoEffect& f : {NoEffect{"service_tier", &json::is_string, "a string"},
                            NoEffect{"stream_options", &json::is_object, "an object"},
                            NoEffect{"max_tool_calls", &json::is_number_integer, "an integer"},
                            NoEffect{"prompt_cache_retention", &json::is_string, "a string"},
                            NoEffect{"client_metadata", &json::is_object, "an object"}}) {
    const json* v = r.Get(f.key);
    if (!v) continue;
    if (!((*v).*(f.is))()) return (void)r.WrongType(f.key, f.expected, *v);
    api.ignored_fields.push_back(f.key);
  }
  if (const json* md = r.Get("metadata")) {
    if (!md->is_object()) return (void)r.WrongType("metadata", "an object", *md);
    out->echo["metadata"] = *md;
  }
  // The session key for the KV tiers: prompt_cache_key, else user, else safety_identifier.
  for (const char* key : {"safety_identifier", "user", "prompt_cache_key"}) {
    std::string v;
    if (r.String(key, &v) && !v.empty()) api.user = v;
  }
}

}  // namespace

std::optional<ApiError> ConvertResponsesInput(const json& input, json* messages) {
  if (input.is_string()) {
    messages->push_back({{"role", "user"}, {"content", input}});
    return std::nullopt;
  }
  if (!input.is_array()) {
    return BadRequest(fmt::format("'input' must be a string or an array of items, got {}", JsonTypeName(input)),
                      "input", "invalid_type");
  }
  if (input.empty()) return BadRequest("'input' must not be an empty array", "input", "empty_array");
  InputConverter c(messages);
  for (size_t i = 0; i < input.size(); ++i) {
    if (std::optional<ApiError> e = c.Item(input[i], i)) return e;
  }
  return std::nullopt;
}

ApiResult<ResponsesRequest> ParseResponsesRequest(const json& body, int64_t n_ctx, bool thinking_switch,
                                                  const RequestLimits& limits) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::none_of(std::begin(kFields), std::end(kFields), [&](const char* k) { return it.key() == k; })) {
      return BadRequest(fmt::format("unknown or unsupported field '{}' (see docs/server.md, Responses API)", it.key()),
                        it.key(), "unsupported_parameter");
    }
  }
  FieldReader r(body);
  ResponsesRequest out;
  ApiRequest& api = out.api;
  api.chat = true;
  api.messages = json::array();
  r.String("model", &api.model);
  r.Bool("stream", &api.stream);
  r.Bool("store", &out.store);
  r.String("previous_response_id", &out.previous_response_id);
  r.String("instructions", &out.instructions);
  bool parallel = true;
  if (r.Bool("parallel_tool_calls", &parallel)) api.parallel_tool_calls = parallel;
  ReadSampling(r, n_ctx, &api);
  ReadTools(r, limits, &out);
  ReadToolChoice(r, &api);
  ReadText(r, &out);
  ReadReasoning(r, thinking_switch, &api);
  ReadServingFields(r, &out);
  if (r.failed()) return r.error();
  if (const json* tc = r.Get("tool_choice")) out.echo["tool_choice"] = *tc;
  if (api.tool_choice != ApiRequest::ToolChoice::kAuto && api.tool_choice != ApiRequest::ToolChoice::kNone &&
      api.tools.is_null()) {
    return BadRequest("'tool_choice' forces a tool call but no 'tools' are declared", "tool_choice");
  }
  if (api.tool_choice == ApiRequest::ToolChoice::kNone) api.tools = nullptr;  // neither rendered nor parsed

  const json* input = r.Get("input");
  if (!input) return BadRequest("'input' is required", "input");
  out.input = json::array();
  if (std::optional<ApiError> e = ConvertResponsesInput(*input, &out.input)) return *e;
  if (out.input.size() > static_cast<size_t>(limits.max_messages)) {
    return BadRequest(fmt::format("'input' has {} items, more than the limit of {} (--max-messages)", out.input.size(),
                                  limits.max_messages),
                      "input", "too_many_messages");
  }
  if (!out.instructions.empty()) api.messages.push_back({{"role", "system"}, {"content", out.instructions}});
  for (const json& m : out.input) api.messages.push_back(m);
  return out;
}

}  // namespace pg
