#include "server/core/output_constraint_request.h"

#include <fmt/format.h>

#include <vector>

#include "chat/tool_call_format.h"
#include "constrain/constraint_cache.h"
#include "constrain/output_grammar.h"
#include "server/common/api_error.h"
#include "server/core/request.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;
using ConstraintResult = ApiResult<std::shared_ptr<const CompiledConstraint>>;

}  // namespace

ToolCallGrammarFormat ToolCallGrammarFormatFor(const std::string& chat_template) {
  // The format the response's parser reads (src/chat/tool_call_format.h).
  switch (DetectToolCallFormat(chat_template)) {
    case ToolCallFormat::kHermes: return ToolCallGrammarFormat::Hermes();
    case ToolCallFormat::kLlama3Json: return ToolCallGrammarFormat::Llama3Json();
    case ToolCallFormat::kGlm45: return ToolCallGrammarFormat::Glm45();
    case ToolCallFormat::kDeepSeekV3: return ToolCallGrammarFormat::DeepSeekV3();
    case ToolCallFormat::kDeepSeekV31: return ToolCallGrammarFormat::DeepSeekV31();
  }
  return ToolCallGrammarFormat::Hermes();
}

namespace {

ApiError SchemaError(const Status& st, const std::string& param) {
  return BadRequest(st.message(), param, st.code() == StatusCode::kUnimplemented ? "unsupported_parameter" : "");
}

// The tools' function objects, in OpenAI's shape ({"type": "function",
// "function": {"name", "parameters", "strict"}}); entries of another shape
// are skipped (ParseChatRequest refuses them on the OpenAI route).
struct Tool {
  std::string name;
  json parameters;  // null when absent
  bool strict = false;
};

std::vector<Tool> ToolsOf(const json& tools) {
  std::vector<Tool> out;
  if (!tools.is_array()) return out;
  for (const json& t : tools) {
    auto fn = t.is_object() ? t.find("function") : t.end();
    if (fn == t.end() || !fn->is_object()) continue;
    auto name = fn->find("name");
    if (name == fn->end() || !name->is_string()) continue;
    Tool tool;
    tool.name = name->get<std::string>();
    if (auto p = fn->find("parameters"); p != fn->end()) tool.parameters = *p;
    // Arguments are an object: a parameters schema that does not say what
    // it is ({} or just properties) means an object.
    json& p = tool.parameters;
    if (p.is_object() && !p.contains("type") && !p.contains("anyOf") && !p.contains("$ref") && !p.contains("enum") &&
        !p.contains("const"))
      p["type"] = "object";
    auto strict = fn->find("strict");
    tool.strict = strict != fn->end() && strict->is_boolean() && strict->get<bool>();
    out.push_back(std::move(tool));
  }
  return out;
}

ConstraintResult Cached(const std::string& key, const Tokenizer& tok, const std::string& description,
                        const std::string& param, const ConstraintCache::Builder& build) {
  Result<std::shared_ptr<const CompiledConstraint>> c =
      ConstraintCache::Global().GetOrBuild(key, TokenVocabulary::For(tok), description, build);
  if (!c.ok()) return SchemaError(c.status(), param);
  return *c;
}

ConstraintResult ForToolCalls(const ApiRequest& api, const Tokenizer& tok, const std::string& chat_template,
                              bool lazy) {
  const ToolCallGrammarFormat format = ToolCallGrammarFormatFor(chat_template);
  std::vector<ToolGrammarOptions> specs;
  std::string key = fmt::format("tools\n{}\n{}\n{}\n", format.name, api.parallel_tool_calls, lazy);
  for (const Tool& t : ToolsOf(api.tools)) {
    if (api.tool_choice == ApiRequest::ToolChoice::kNamed && t.name != api.tool_choice_name) continue;
    const bool constrain = !lazy || t.strict;
    specs.push_back({t.name, t.parameters, constrain});
    key += fmt::format("{}\n{}\n{}\n", json(t.name).dump(), constrain, t.parameters.dump());
  }
  const bool parallel = api.parallel_tool_calls;
  return Cached(key, tok, "tool calls (" + format.name + ")", "tools",
                [&]() { return ToolCallGrammar(format, specs, parallel, lazy, "tools"); });
}

}  // namespace

ConstraintResult BuildOutputConstraint(const ApiRequest& api, const Tokenizer& tok, const std::string& chat_template) {
  using TC = ApiRequest::ToolChoice;
  using RF = ApiRequest::ResponseFormat;
  const bool forced = api.tool_choice == TC::kRequired || api.tool_choice == TC::kNamed;
  if (forced) {
    const std::vector<Tool> tools = ToolsOf(api.tools);
    if (tools.empty())
      return BadRequest("'tool_choice' \"required\" or a named function needs a non-empty 'tools'", "tool_choice");
    if (api.response_format != RF::kText) {
      const std::string& param = api.response_schema_param;
      return BadRequest(fmt::format("a JSON output format ('{}') cannot be combined with a 'tool_choice' that forces "
                                    "a tool call",
                                    param),
                        param);
    }
    if (api.tool_choice == TC::kNamed) {
      bool found = false;
      for (const Tool& t : tools) found |= t.name == api.tool_choice_name;
      if (!found)
        return BadRequest(
            fmt::format("'tool_choice' names the function '{}', which is not in 'tools'", api.tool_choice_name),
            "tool_choice");
    }
    return ForToolCalls(api, tok, chat_template, /*lazy=*/false);
  }
  if (api.response_format == RF::kJsonObject)
    return Cached("json_object", tok, "json_object", "response_format",
                  [] { return Result<Grammar>(JsonObjectGrammar()); });
  if (api.response_format == RF::kChoice) {
    const std::vector<std::string>& choices = api.response_choices;
    return Cached("choice\n" + json(choices).dump(), tok, "choice", api.response_schema_param,
                  [&] { return Result<Grammar>(ChoiceGrammar(choices)); });
  }
  if (api.response_format == RF::kJsonSchema) {
    const json& schema = api.response_schema;
    const std::string& param = api.response_schema_param;
    return Cached("json_schema\n" + schema.dump(), tok, "json_schema '" + api.response_schema_name + "'", param,
                  [&] { return JsonSchemaGrammar(schema, param); });
  }
  if (api.tool_choice == TC::kAuto) {
    bool any_strict = false;
    for (const Tool& t : ToolsOf(api.tools)) any_strict |= t.strict;
    if (any_strict && !ToolCallGrammarFormatFor(chat_template).trigger().empty())
      return ForToolCalls(api, tok, chat_template, true);
  }
  return std::shared_ptr<const CompiledConstraint>();
}

}  // namespace pg
