#include "constrain/output_grammar.h"

#include <fmt/format.h>

#include "constrain/json_schema_grammar.h"

namespace pg {
namespace {

// Calls one output may hold when parallel calls are allowed.
constexpr uint32_t kMaxParallelCalls = 8;

}  // namespace

ToolCallFormat ToolCallFormat::Hermes() {
  return {"hermes", "<tool_call>", "</tool_call>", "arguments", true};
}

ToolCallFormat ToolCallFormat::Llama3Json() { return {"llama3_json", "", "", "parameters", false}; }

Grammar JsonObjectGrammar() {
  GrammarBuilder b;
  const NodeId root = b.Seq({b.Ws(), b.JsonObject()});
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

Result<Grammar> ToolCallGrammar(const ToolCallFormat& format, const std::vector<ToolGrammarSpec>& tools, bool parallel,
                                bool lazy, const std::string& where) {
  if (tools.empty()) return InvalidArgument(fmt::format("{}: no tool to call", where));
  GrammarBuilder b;
  // {"name": "NAME", "ARGS_KEY": ARGS}, whitespace allowed between tokens.
  std::vector<NodeId> named;
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolGrammarSpec& t = tools[i];
    NodeId args;
    if (t.constrain_arguments && !t.parameters.is_null()) {
      Result<NodeId> n = AddJsonSchema(t.parameters, fmt::format("{} '{}' parameters", where, t.name), &b);
      if (!n.ok()) return n.status();
      args = *n;
    } else {
      args = b.JsonObject();
    }
    named.push_back(b.Seq({b.Literal(GrammarBuilder::Quoted(t.name)), b.Ws(), b.Literal(","), b.Ws(),
                           b.Literal(GrammarBuilder::Quoted(format.args_key)), b.Ws(), b.Literal(":"), b.Ws(), args}));
  }
  const NodeId object = b.Seq({b.Literal("{"), b.Ws(), b.Literal("\"name\""), b.Ws(), b.Literal(":"), b.Ws(),
                               b.Choice(std::move(named)), b.Ws(), b.Literal("}")});
  // begin, then the object, then end; whitespace allowed around the object.
  const NodeId after_begin = b.Seq({b.Ws(), object, b.Ws(), b.Literal(format.end)});
  NodeId root;
  if (lazy) {
    if (format.begin.empty())
      return Unimplemented(fmt::format("{}: strict tools under tool_choice auto are not enforced for the {} tool-call "
                                       "format",
                                       where, format.name));
    root = b.FreeUntil(format.begin, after_begin);
  } else {
    const NodeId call = b.Seq({b.Literal(format.begin), after_begin});
    const uint32_t max = parallel && format.multiple ? kMaxParallelCalls : 1;
    root = b.Seq({b.Ws(), b.Repeat(call, b.Ws(), 1, max)});
  }
  return std::move(b).Build(root);
}

}  // namespace pg
