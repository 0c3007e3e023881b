#include "constrain/output_grammar.h"

#include <fmt/format.h>

#include "base/tool_call_markers.h"
#include "constrain/glm_arguments_grammar.h"
#include "constrain/json_schema_grammar.h"

namespace pg {
namespace {

// Calls one output may hold when parallel calls are allowed.
constexpr uint32_t kMaxParallelCalls = 8;

// A format's name and the literal text around each call.
ToolCallGrammarFormat NamedFormat(std::string name, std::string_view begin, std::string_view end) {
  ToolCallGrammarFormat f;
  f.name = std::move(name);
  f.begin = begin;
  f.end = end;
  return f;
}

// DeepSeek's formats: the name outside the JSON, every call between the
// calls-begin and calls-end markers.
ToolCallGrammarFormat DeepSeek(std::string name, std::string_view begin, std::string_view end,
                               std::string_view name_suffix) {
  ToolCallGrammarFormat f = NamedFormat(std::move(name), begin, end);
  f.name_suffix = name_suffix;
  f.calls_begin = tool_markers::kDsCallsBegin;
  f.calls_end = tool_markers::kDsCallsEnd;
  return f;
}

}  // namespace

ToolCallGrammarFormat ToolCallGrammarFormat::Hermes() {
  ToolCallGrammarFormat f = NamedFormat("hermes", tool_markers::kCallOpen, tool_markers::kCallClose);
  f.args_key = "arguments";
  return f;
}

ToolCallGrammarFormat ToolCallGrammarFormat::Llama3Json() {
  ToolCallGrammarFormat f = NamedFormat("llama3_json", "", "");
  f.args_key = "parameters";
  f.multiple = false;
  return f;
}

ToolCallGrammarFormat ToolCallGrammarFormat::DeepSeekV3() {
  return DeepSeek("deepseek_v3", fmt::format("{}function{}", tool_markers::kDsCallBegin, tool_markers::kDsSep),
                  fmt::format("\n```{}", tool_markers::kDsCallEnd), fmt::format("\n{}\n", tool_markers::kDsJsonFence));
}

ToolCallGrammarFormat ToolCallGrammarFormat::DeepSeekV31() {
  return DeepSeek("deepseek_v31", tool_markers::kDsCallBegin, tool_markers::kDsCallEnd, tool_markers::kDsSep);
}

ToolCallGrammarFormat ToolCallGrammarFormat::Glm45() {
  ToolCallGrammarFormat f = NamedFormat("glm45", tool_markers::kCallOpen, tool_markers::kCallClose);
  f.name_suffix = "\n";
  f.key_value_args = true;
  return f;
}

Grammar JsonObjectGrammar() {
  GrammarBuilder b;
  const NodeId root = b.Seq({b.Ws(), b.JsonObject()});
  return std::move(b).Build(root);
}

Grammar ChoiceGrammar(const std::vector<std::string>& choices) {
  GrammarBuilder b;
  std::vector<NodeId> alternatives;
  for (const std::string& c : choices) alternatives.push_back(b.Literal(c));
  const NodeId root = b.Choice(std::move(alternatives));
  return std::move(b).Build(root);
}

Result<Grammar> JsonSchemaGrammar(const nlohmann::ordered_json& schema, const std::string& where) {
  GrammarBuilder b;
  const NodeId ws = b.Ws();
  Result<NodeId> value = AddJsonSchema(schema, where, &b);
  if (!value.ok()) return value.status();
  const NodeId root = b.Seq({ws, *value});
  return std::move(b).Build(root);
}

Result<Grammar> ToolCallGrammar(const ToolCallGrammarFormat& format, const std::vector<ToolGrammarOptions>& tools,
                                bool parallel, bool lazy, const std::string& where) {
  if (tools.empty()) return InvalidArgument(fmt::format("{}: no tool to call", where));
  GrammarBuilder b;
  // GLM values end at the first "</arg_value>": their JSON strings hold no raw '<'.
  if (format.key_value_args) b.set_string_forbidden("<");
  // One alternative per tool: its name and its arguments.
  std::vector<NodeId> named;
  for (const ToolGrammarOptions& t : tools) {
    if (format.key_value_args) {
      Result<NodeId> pairs = AddGlmArguments(t.constrain_arguments ? t.parameters : nullptr, t.constrain_arguments,
                                             fmt::format("{} '{}' parameters", where, t.name), &b);
      if (!pairs.ok()) return pairs.status();
      named.push_back(b.Seq({b.Literal(format.name_prefix + t.name + format.name_suffix), *pairs}));
      continue;
    }
    NodeId args;
    if (t.constrain_arguments && !t.parameters.is_null()) {
      Result<NodeId> n = AddJsonSchema(t.parameters, fmt::format("{} '{}' parameters", where, t.name), &b);
      if (!n.ok()) return n.status();
      args = *n;
    } else {
      args = b.JsonObject();
    }
    if (format.args_key.empty()) {  // NAME outside the JSON
      named.push_back(b.Seq({b.Literal(format.name_prefix + t.name + format.name_suffix), b.Ws(), args}));
    } else {  // "NAME", "ARGS_KEY": ARGS inside {"name": ...}
      named.push_back(
          b.Seq({b.Literal(GrammarBuilder::Quoted(t.name)), b.Ws(), b.Literal(","), b.Ws(),
                 b.Literal(GrammarBuilder::Quoted(format.args_key)), b.Ws(), b.Literal(":"), b.Ws(), args}));
    }
  }
  NodeId body = b.Choice(std::move(named));
  if (!format.args_key.empty())
    body = b.Seq(
        {b.Literal("{"), b.Ws(), b.Literal("\"name\""), b.Ws(), b.Literal(":"), b.Ws(), body, b.Ws(), b.Literal("}")});
  // begin, the call, end; whitespace allowed around a JSON object.
  const NodeId ws_in = format.args_key.empty() ? b.Seq({}) : b.Ws();
  const NodeId call = b.Seq({b.Literal(format.begin), ws_in, body, ws_in, b.Literal(format.end)});
  const uint32_t max = parallel && format.multiple ? kMaxParallelCalls : 1;
  const NodeId calls = b.Repeat(call, b.Ws(), 1, max);
  NodeId root;
  if (lazy) {
    if (format.trigger().empty())
      return Unimplemented(
          fmt::format("{}: strict tools under tool_choice auto are not enforced for the {} tool-call "
                      "format",
                      where, format.name));
    // After the trigger: the rest of the call (the trigger is its begin;
    // free text, and so further calls, may follow), or all the calls and
    // calls_end.
    const NodeId after = format.calls_begin.empty() ? b.Seq({ws_in, body, ws_in, b.Literal(format.end)})
                                                    : b.Seq({calls, b.Literal(format.calls_end)});
    root = b.FreeUntil(format.trigger(), after);
  } else {
    root = b.Seq({b.Ws(), b.Literal(format.calls_begin), calls, b.Literal(format.calls_end)});
  }
  return std::move(b).Build(root);
}

}  // namespace pg
