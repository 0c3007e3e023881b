// ConvertAnthropicConversation: system, messages, tools and tool_choice of an
// Anthropic body -> the normalised OpenAI-like form in ApiRequest (see
// anthropic_request.h), with the cache_control breakpoints it carries.
#include <fmt/format.h>

#include <set>
#include <string>

#include "server/anthropic/anthropic_context_edits.h"
#include "server/anthropic/anthropic_request.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/known_keys.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

std::optional<ApiError> NeedString(const json& obj, const char* key, const std::string& where, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    return BadRequest(fmt::format("{}.{}: a string is required", where, key), where + "." + key, "invalid_type");
  }
  *out = it->get<std::string>();
  return std::nullopt;
}

// Converts blocks and records breakpoints, failing on the first problem.
class Converter {
 public:
  Converter(const RequestLimits& limits, AnthropicRequest* out) : limits_(limits), out_(out) {}

  std::optional<ApiError> error;

  // {"type": "ephemeral", "ttl": "5m" | "1h"} on a block: records a breakpoint.
  void CacheControl(const json& block, const std::string& where, CacheBreakpoint bp) {
    auto it = block.find("cache_control");
    if (it == block.end() || it->is_null() || error) return;
    const std::string param = where + ".cache_control";
    if (!it->is_object()) return Fail(BadRequest(param + ": must be an object", param, "invalid_type"));
    if ((error = UnknownKey(*it, {"type", "ttl"}, param))) return;
    auto type = it->find("type");
    if (type == it->end() || *type != "ephemeral") {
      return Fail(BadRequest(param + ".type: must be \"ephemeral\"", param + ".type"));
    }
    auto ttl = it->find("ttl");
    if (ttl != it->end() && !ttl->is_null()) {
      if (*ttl == "5m") {
        bp.ttl_s = 300;
      } else if (*ttl == "1h") {
        bp.ttl_s = 3600;
      } else {
        return Fail(
            BadRequest(fmt::format("{}.ttl: must be \"5m\" or \"1h\", got {}", param, ttl->dump()), param + ".ttl"));
      }
    }
    if (out_->breakpoints.size() >= static_cast<size_t>(kMaxCacheBreakpoints)) {
      return Fail(
          BadRequest(fmt::format("a request may carry at most {} blocks with cache_control", kMaxCacheBreakpoints),
                     param, "too_many_cache_breakpoints"));
    }
    out_->breakpoints.push_back(bp);
  }

  // A {"type": "text", "text": ...} block; appends its text.
  void TextBlock(const json& block, const std::string& where, std::string* text) {
    if ((error = UnknownKey(block, {"type", "text", "cache_control", "citations"}, where))) return;
    if (block.contains("citations") && !block["citations"].is_null() &&
        !(block["citations"].is_array() && block["citations"].empty())) {
      return Fail(
          BadRequest(where + ".citations: citations are not supported", where + ".citations", "unsupported_parameter"));
    }
    std::string t;
    if ((error = NeedString(block, "text", where, &t))) return;
    *text += t;
  }

  std::string BlockType(const json& block, const std::string& where) {
    if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) {
      Fail(BadRequest(where + ": a content block must be an object with a string 'type'", where, "invalid_type"));
      return "";
    }
    return block["type"].get<std::string>();
  }

  void Unsupported(const std::string& type, const std::string& where, const char* allowed) {
    Fail(BadRequest(fmt::format("{}: content block type '{}' is not supported here ({})", where, type, allowed),
                    where + ".type", "unsupported_content"));
  }

  // fn(block, where, type) for each block of `blocks` (where: "<where>.content[i]")
  // while no error is set; false when a block's type was unreadable or fn
  // returned false (the caller stops there).
  template <typename Fn>
  bool ForEachBlock(const json& blocks, const std::string& where, Fn fn) {
    for (size_t b = 0; b < blocks.size() && !error; ++b) {
      const std::string bw = fmt::format("{}.content[{}]", where, b);
      const std::string type = BlockType(blocks[b], bw);
      if (error || !fn(blocks[b], bw, type)) return false;
    }
    return true;
  }

  void System(const json& system) {
    json msg = {{"role", "system"}, {"content", ""}};
    std::string text;
    if (system.is_string()) {
      text = system.get<std::string>();
    } else if (system.is_array()) {
      for (size_t i = 0; i < system.size() && !error; ++i) {
        const std::string where = fmt::format("system[{}]", i);
        std::string type = BlockType(system[i], where);
        if (error) return;
        if (type != "text") return Unsupported(type, where, "text only");
        TextBlock(system[i], where, &text);
        CacheControl(system[i], where, {CacheBreakpoint::Kind::kContent, out_->api.messages.size(), text.size()});
      }
    } else {
      return Fail(
          BadRequest(fmt::format("'system' must be a string or an array of text blocks, got {}", JsonTypeName(system)),
                     "system", "invalid_type"));
    }
    if (text.empty() && !PendingBreakpoint()) return;  // "" or []: no system turn at all
    msg["content"] = text;
    out_->api.messages.push_back(std::move(msg));
  }

  void Message(const json& m, size_t i) {
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) return Fail(BadRequest(where + ": must be an object", where, "invalid_type"));
    if ((error = UnknownKey(m, {"role", "content"}, where))) return;
    std::string role;
    if ((error = NeedString(m, "role", where, &role))) return;
    if (role != "user" && role != "assistant" && role != "system") {
      return Fail(
          BadRequest(fmt::format("{}.role: must be \"user\", \"assistant\" or \"system\", got \"{}\"", where, role),
                     where + ".role", "invalid_role"));
    }
    auto content = m.find("content");
    if (content == m.end()) return Fail(BadRequest(where + ".content: required", where + ".content"));
    if (content->is_string()) {
      out_->api.messages.push_back({{"role", role}, {"content", *content}});
      return;
    }
    if (!content->is_array()) {
      return Fail(BadRequest(where + ".content: must be a string or an array of content blocks", where + ".content",
                             "invalid_type"));
    }
    if (role == "user") return UserBlocks(*content, where);
    if (role == "system") return SystemTurn(*content, where);
    AssistantBlocks(*content, where);
  }

  // A system turn inside the conversation (Claude Code sends them): its text
  // blocks become one {"role": "system"} message, rendered where it stands
  // as far as the template allows.
  void SystemTurn(const json& blocks, const std::string& where) {
    const size_t index = out_->api.messages.size();
    std::string text;
    const bool read = ForEachBlock(blocks, where, [&](const json& block, const auto& bw, const auto& type) {
      if (type != "text") {
        Unsupported(type, bw, "a system turn holds text blocks only");
        return false;
      }
      TextBlock(block, bw, &text);
      CacheControl(block, bw, {CacheBreakpoint::Kind::kContent, index, text.size()});
      return true;
    });
    if (!read) return;
    out_->api.messages.push_back({{"role", "system"}, {"content", text}});
  }

  // User turns: tool_result blocks become "tool" messages, text the user message.
  void UserBlocks(const json& blocks, const std::string& where) {
    json user = {{"role", "user"}, {"content", ""}};
    std::string text;
    const bool read = ForEachBlock(blocks, where, [&](const json& block, const auto& bw, const auto& type) {
      if (type == "text") {
        TextBlock(block, bw, &text);
        CacheControl(block, bw, {CacheBreakpoint::Kind::kContent, out_->api.messages.size(), text.size()});
      } else if (type == "tool_result") {
        if (!text.empty()) {  // text before a result: keep the order
          user["content"] = text;
          out_->api.messages.push_back(user);
          text.clear();
        }
        ToolResult(block, bw);
      } else {
        Unsupported(type, bw, "text and tool_result");
        return false;
      }
      return true;
    });
    if (!read) return;
    if (!text.empty() || blocks.empty() || out_->api.messages.empty() || out_->api.messages.back()["role"] != "tool" ||
        PendingBreakpoint()) {
      user["content"] = text;
      out_->api.messages.push_back(std::move(user));
    }
  }

  // A breakpoint recorded for the message about to be pushed.
  bool PendingBreakpoint() const {
    return !out_->breakpoints.empty() && out_->breakpoints.back().kind == CacheBreakpoint::Kind::kContent &&
           out_->breakpoints.back().index == out_->api.messages.size();
  }

  void ToolResult(const json& block, const std::string& where) {
    if ((error = UnknownKey(block, {"type", "tool_use_id", "content", "is_error", "cache_control"}, where))) return;
    std::string id;
    if ((error = NeedString(block, "tool_use_id", where, &id))) return;
    if (!tool_use_ids_.count(id)) {
      return Fail(BadRequest(fmt::format("{}.tool_use_id: '{}' answers no earlier tool_use block", where, id),
                             where + ".tool_use_id", "unknown_tool_use_id"));
    }
    std::string text;
    auto content = block.find("content");
    if (content != block.end() && content->is_string()) {
      text = content->get<std::string>();
    } else if (content != block.end() && content->is_array()) {
      const bool read = ForEachBlock(*content, where, [&](const json& part, const auto& cw, const auto& type) {
        if (type != "text") {
          Unsupported(type, cw, "a tool_result holds text blocks only");
          return false;
        }
        if (part.contains("cache_control")) {
          Fail(BadRequest(cw + ".cache_control: put cache_control on the tool_result block itself",
                          cw + ".cache_control", "unsupported_parameter"));
          return false;
        }
        TextBlock(part, cw, &text);
        return true;
      });
      if (!read) return;
    } else if (content != block.end() && !content->is_null()) {
      return Fail(BadRequest(where + ".content: must be a string or an array of text blocks", where + ".content",
                             "invalid_type"));
    }
    auto is_error = block.find("is_error");
    if (is_error != block.end() && !is_error->is_null() && !is_error->is_boolean()) {
      return Fail(BadRequest(where + ".is_error: must be a boolean", where + ".is_error", "invalid_type"));
    }
    if (is_error != block.end() && is_error->is_boolean() && is_error->get<bool>()) text = "Error: " + text;
    CacheControl(block, where, {CacheBreakpoint::Kind::kContent, out_->api.messages.size(), text.size()});
    out_->api.messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", text}});
  }

  // Thinking blocks of an earlier turn: their text is the turn's
  // reasoning_content (templates that replay reasoning read it; others do
  // not render it); redacted_thinking is opaque and carries no text.
  void Thinking(const json& block, const std::string& type, const std::string& where, std::string* reasoning) {
    if (type == "redacted_thinking") {
      error = UnknownKey(block, {"type", "data"}, where);
      return;
    }
    if ((error = UnknownKey(block, {"type", "thinking", "signature"}, where))) return;
    std::string t;
    if ((error = NeedString(block, "thinking", where, &t))) return;
    *reasoning += (reasoning->empty() ? "" : "\n") + t;
  }

  // A tool_use block of the assistant turn at `index` becomes calls' next
  // entry; false on an error.
  bool ToolUse(const json& u, const std::string& bw, size_t index, json* calls) {
    if ((error = UnknownKey(u, {"type", "id", "name", "input", "cache_control"}, bw))) return false;
    std::string id, name;
    if ((error = NeedString(u, "id", bw, &id)) || (error = NeedString(u, "name", bw, &name))) return false;
    if (!u.contains("input") || !u["input"].is_object()) {
      Fail(BadRequest(bw + ".input: an object is required", bw + ".input", "invalid_type"));
      return false;
    }
    tool_use_ids_.insert(id);
    CacheControl(u, bw, {CacheBreakpoint::Kind::kToolArguments, index, 0, calls->size()});
    calls->push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", u["input"]}}}});
    return true;
  }

  void AssistantBlocks(const json& blocks, const std::string& where) {
    const size_t index = out_->api.messages.size();
    json calls = json::array();
    std::string text, reasoning;
    const bool read = ForEachBlock(blocks, where, [&](const json& block, const auto& bw, const auto& type) {
      if (type == "text") {
        TextBlock(block, bw, &text);
        CacheControl(block, bw, {CacheBreakpoint::Kind::kContent, index, text.size()});
      } else if (type == "tool_use") {
        return ToolUse(block, bw, index, &calls);
      } else if (type == "thinking" || type == "redacted_thinking") {
        Thinking(block, type, bw, &reasoning);
      } else {
        Unsupported(type, bw, "text, tool_use, thinking and redacted_thinking");
        return false;
      }
      return true;
    });
    if (!read) return;
    json msg = {{"role", "assistant"}, {"content", text}};
    if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    out_->api.messages.push_back(std::move(msg));
  }

  void Tools(const json& tools) {
    if (!tools.is_array()) {
      return Fail(
          BadRequest(fmt::format("'tools' must be an array, got {}", JsonTypeName(tools)), "tools", "invalid_type"));
    }
    if (tools.size() > static_cast<size_t>(limits_.max_tools)) {
      return Fail(BadRequest(fmt::format("'tools' has {} entries, more than the limit of {} (--max-tools)",
                                         tools.size(), limits_.max_tools),
                             "tools", "too_many_tools"));
    }
    out_->api.tools = json::array();
    for (size_t i = 0; i < tools.size() && !error; ++i) {
      const std::string where = fmt::format("tools[{}]", i);
      const json& t = tools[i];
      if (!t.is_object()) return Fail(BadRequest(where + ": must be an object", where, "invalid_type"));
      if (t.contains("type") && !t["type"].is_null() && t["type"] != "custom") {
        return Fail(BadRequest(fmt::format("{}.type: {} is a server tool, which this server does not run; declare "
                                           "client tools with name, description and input_schema",
                                           where, t["type"].dump()),
                               where + ".type", "unsupported_tool"));
      }
      if ((error = UnknownKey(t, {"type", "name", "description", "input_schema", "cache_control", "defer_loading"},
                              where))) {
        return;
      }
      std::string name;
      if ((error = NeedString(t, "name", where, &name))) return;
      if (name.empty() || name.size() > 128) {
        return Fail(BadRequest(where + ".name: must be 1 to 128 characters", where + ".name"));
      }
      if (!names_.insert(name).second) {
        return Fail(BadRequest(fmt::format("{}.name: tool '{}' is declared twice", where, name), where + ".name"));
      }
      json fn = {{"name", name}};
      if (t.contains("description") && !t["description"].is_null()) {
        if (!t["description"].is_string()) {
          return Fail(BadRequest(where + ".description: must be a string", where + ".description", "invalid_type"));
        }
        fn["description"] = t["description"];
      }
      if (!t.contains("input_schema") || !t["input_schema"].is_object()) {
        return Fail(BadRequest(where + ".input_schema: a JSON Schema object is required", where + ".input_schema",
                               "invalid_type"));
      }
      fn["parameters"] = t["input_schema"];
      // defer_loading: true keeps the tool out of the prompt until a tool
      // search would load it (Anthropic's meaning); it stays declared.
      auto defer = t.find("defer_loading");
      if (defer != t.end() && !defer->is_null() && !defer->is_boolean()) {
        return Fail(BadRequest(where + ".defer_loading: must be a boolean", where + ".defer_loading", "invalid_type"));
      }
      if (defer != t.end() && defer->is_boolean() && defer->get<bool>()) {
        if (t.contains("cache_control")) {
          return Fail(BadRequest(where + ".cache_control: a deferred tool is not in the prompt to cache",
                                 where + ".cache_control"));
        }
        continue;
      }
      CacheControl(t, where, {CacheBreakpoint::Kind::kTool, out_->api.tools.size()});
      out_->api.tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
  }

  void ToolChoice(const json& tc) {
    if (!tc.is_object()) {
      return Fail(BadRequest(fmt::format("'tool_choice' must be an object, got {}", JsonTypeName(tc)), "tool_choice",
                             "invalid_type"));
    }
    if ((error = UnknownKey(tc, {"type", "name", "disable_parallel_tool_use"}, "tool_choice"))) return;
    std::string type;
    if ((error = NeedString(tc, "type", "tool_choice", &type))) return;
    ApiRequest& api = out_->api;
    if (type == "auto") {
      api.tool_choice = ApiRequest::ToolChoice::kAuto;
    } else if (type == "any") {
      api.tool_choice = ApiRequest::ToolChoice::kRequired;
    } else if (type == "none") {
      api.tool_choice = ApiRequest::ToolChoice::kNone;
    } else if (type == "tool") {
      api.tool_choice = ApiRequest::ToolChoice::kNamed;
      if ((error = NeedString(tc, "name", "tool_choice", &api.tool_choice_name))) return;
      if (!names_.count(api.tool_choice_name)) {
        return Fail(
            BadRequest(fmt::format("tool_choice.name: '{}' is not one of the declared tools", api.tool_choice_name),
                       "tool_choice.name"));
      }
    } else {
      return Fail(BadRequest(fmt::format("tool_choice.type: must be auto, any, tool or none, got \"{}\"", type),
                             "tool_choice.type"));
    }
    if (type != "tool" && tc.contains("name")) {
      return Fail(BadRequest("tool_choice.name: only with type \"tool\"", "tool_choice.name"));
    }
    auto dp = tc.find("disable_parallel_tool_use");
    if (dp != tc.end() && !dp->is_null()) {
      if (!dp->is_boolean()) {
        return Fail(BadRequest("tool_choice.disable_parallel_tool_use: must be a boolean",
                               "tool_choice.disable_parallel_tool_use", "invalid_type"));
      }
      api.parallel_tool_calls = !dp->get<bool>();
    }
  }

  bool HasTools() const { return !names_.empty(); }

 private:
  void Fail(ApiError e) {
    if (!error) error = std::move(e);
  }

  const RequestLimits& limits_;
  AnthropicRequest* out_;
  std::set<std::string> tool_use_ids_;  // ids of the tool_use blocks seen so far
  std::set<std::string> names_;         // declared tool names
};

}  // namespace

std::optional<ApiError> ConvertAnthropicConversation(const json& body, const RequestLimits& limits,
                                                     AnthropicRequest* out) {
  Converter c(limits, out);
  out->api.chat = true;
  out->api.messages = json::array();
  // Breakpoints in prompt order for the usual templates: tools, system, messages.
  auto tools = body.find("tools");
  if (tools != body.end() && !tools->is_null()) c.Tools(*tools);
  if (c.error) return c.error;
  auto tc = body.find("tool_choice");
  if (tc != body.end() && !tc->is_null()) c.ToolChoice(*tc);
  if (c.error) return c.error;
  if (out->api.tool_choice != ApiRequest::ToolChoice::kAuto && !c.HasTools()) {
    if (out->api.tool_choice != ApiRequest::ToolChoice::kNone) {
      return BadRequest("'tool_choice' forces a tool call but no 'tools' are declared", "tool_choice");
    }
  }
  auto system = body.find("system");
  if (system != body.end() && !system->is_null()) c.System(*system);
  if (c.error) return c.error;

  auto messages = body.find("messages");
  if (messages == body.end() || messages->is_null()) return BadRequest("'messages' is required", "messages");
  if (!messages->is_array()) {
    return BadRequest(fmt::format("'messages' must be an array, got {}", JsonTypeName(*messages)), "messages",
                      "invalid_type");
  }
  if (messages->empty()) return BadRequest("'messages' must not be empty", "messages");
  if (messages->size() > static_cast<size_t>(limits.max_messages)) {
    return BadRequest(fmt::format("'messages' has {} entries, more than the limit of {} (--max-messages)",
                                  messages->size(), limits.max_messages),
                      "messages", "too_many_messages");
  }
  for (size_t i = 0; i < messages->size() && !c.error; ++i) c.Message((*messages)[i], i);
  if (c.error) return c.error;
  if (messages->back().is_object() && messages->back().value("role", "") == "assistant") {
    return BadRequest(
        "the last message is from the assistant: continuing a prefilled assistant turn is not "
        "supported; end with a user message",
        fmt::format("messages[{}]", messages->size() - 1), "unsupported_prefill");
  }
  auto cm = body.find("context_management");
  if (cm != body.end()) {
    if (std::optional<ApiError> e = ApplyContextManagement(*cm, &out->api.messages, &out->applied_edits)) return e;
  }
  if (out->api.tool_choice == ApiRequest::ToolChoice::kNone || (out->api.tools.is_array() && out->api.tools.empty())) {
    out->api.tools = nullptr;  // as on the OpenAI path: neither rendered nor parsed
  }
  return std::nullopt;
}

}  // namespace pg
