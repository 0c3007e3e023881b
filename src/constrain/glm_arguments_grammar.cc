#include "constrain/glm_arguments_grammar.h"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/tool_call_markers.h"
#include "constrain/json_schema_grammar.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

constexpr uint32_t kMaxFreeKeyChars = 64;

std::vector<std::string> ValueStops() {
  return {std::string(tool_markers::kArgValueEnd), std::string(tool_markers::kCallClose)};
}

NodeId Pair(GrammarBuilder* b, NodeId key, NodeId value) {
  using namespace tool_markers;
  return b->Seq({b->Literal(std::string(kArgKey)), key, b->Literal(fmt::format("{}\n{}", kArgKeyEnd, kArgValue)), value,
                 b->Literal(fmt::format("{}\n", kArgValueEnd))});
}

// Any number of pairs with free keys and raw values.
NodeId FreePairs(GrammarBuilder* b) {
  const NodeId pair = Pair(b, b->RawText({"<", ">"}, 1, kMaxFreeKeyChars), b->RawText(ValueStops()));
  return b->Repeat(pair, b->Seq({}), 0, Grammar::kUnbounded);
}

// As src/chat's IsStringParam: the parser keeps such a value as raw text.
bool TypedAsString(const json& prop) {
  if (!prop.is_object()) return false;
  const json type = prop.value("type", json());
  if (type == "string") return true;
  if (type.is_array())
    for (const json& t : type)
      if (t == "string") return true;
  return false;
}

// A string parameter's raw value; nullopt when no string is allowed.
Result<std::optional<NodeId>> RawValue(const json& prop, GrammarBuilder* b) {
  std::vector<json> fixed;
  if (prop.contains("const")) fixed.push_back(prop["const"]);
  if (auto e = prop.find("enum"); e != prop.end() && e->is_array()) fixed.insert(fixed.end(), e->begin(), e->end());
  if (prop.contains("const") || prop.contains("enum")) {
    std::vector<NodeId> alts;
    for (const json& v : fixed)
      if (v.is_string()) alts.push_back(b->Literal(v.get<std::string>()));
    if (alts.empty()) return std::optional<NodeId>();
    return std::optional<NodeId>(b->Choice(std::move(alts)));
  }
  // minLength / maxLength were checked by the schema compiler.
  const uint32_t min = static_cast<uint32_t>(prop.value("minLength", int64_t{0}));
  const uint32_t max =
      prop.contains("maxLength") ? static_cast<uint32_t>(prop["maxLength"].get<int64_t>()) : Grammar::kUnbounded;
  return std::optional<NodeId>(b->RawText(ValueStops(), min, max));
}

// `prop` without a top-level null; nullopt when only null is left.
std::optional<json> WithoutNull(const json& prop) {
  if (!prop.is_object()) return prop;
  json out = prop;
  auto drop = [](json& arr, auto is_null) {
    json kept = json::array();
    for (const json& v : arr)
      if (!is_null(v)) kept.push_back(v);
    arr = std::move(kept);
    return !arr.empty();
  };
  if (out.contains("const") && out["const"].is_null()) return std::nullopt;
  if (out.contains("enum") && out["enum"].is_array() && !drop(out["enum"], [](const json& v) { return v.is_null(); }))
    return std::nullopt;
  if (auto t = out.find("type"); t != out.end()) {
    if (*t == "null") return std::nullopt;
    if (t->is_array() && !drop(*t, [](const json& v) { return v == "null"; })) return std::nullopt;
  }
  if (out.contains("anyOf") && out["anyOf"].is_array() && !drop(out["anyOf"], [](const json& v) {
        return v == json{{"type", "null"}} || v == json{{"const", nullptr}};
      }))
    return std::nullopt;
  return out;
}

// One parameter's value; nullopt when the format cannot write it.
Result<std::optional<NodeId>> Value(const json& root, const std::string& key, const json& prop,
                                    const std::string& where, GrammarBuilder* b) {
  const std::string path = "#/properties/" + key;
  // Compiled as JSON in every case: unsupported keywords are refused alike.
  Result<NodeId> as_json = AddJsonSubschema(root, prop, path, where, b);
  if (!as_json.ok()) return as_json.status();
  if (TypedAsString(prop)) return RawValue(prop, b);
  std::optional<json> no_null = WithoutNull(prop);
  if (!no_null) return std::optional<NodeId>();
  Result<NodeId> n = AddJsonSubschema(root, *no_null, path, where, b);
  if (!n.ok()) return n.status();
  return std::optional<NodeId>(b->Seq({b->Ws(), *n, b->Ws()}));
}

}  // namespace

Result<NodeId> AddGlmArguments(const json& parameters, bool constrain, const std::string& where, GrammarBuilder* b) {
  if (!constrain || parameters.is_null()) return FreePairs(b);
  if (!parameters.is_object() || parameters.value("type", json("object")) != "object")
    return Unimplemented(
        fmt::format("{}: the GLM-4.5 tool-call format writes arguments as key/value pairs; the "
                    "parameters schema must be an object schema",
                    where));
  const json* props = parameters.contains("properties") ? &parameters["properties"] : nullptr;
  if (props && !props->is_object())
    return InvalidArgument(fmt::format("{}: 'properties' at # must be an object", where));
  std::set<std::string> required;
  if (auto rq = parameters.find("required"); rq != parameters.end() && rq->is_array())
    for (const json& k : *rq)
      if (k.is_string()) required.insert(k.get<std::string>());
  const bool closed = parameters.value("additionalProperties", json(true)) == false;
  std::vector<NodeId> members;
  if (props) {
    for (const auto& [key, prop] : props->items()) {
      Result<std::optional<NodeId>> v = Value(parameters, key, prop, where, b);
      if (!v.ok()) return v.status();
      const bool req = required.count(key) > 0;
      if (!*v) {
        if (!req) continue;
        return Unimplemented(
            fmt::format("{}: required parameter '{}' can only be null, which the GLM-4.5 tool-call "
                        "format cannot write",
                        where, key));
      }
      const NodeId pair = Pair(b, b->Literal(key), **v);
      members.push_back(req ? pair : b->Choice({pair, b->Seq({})}));
    }
  }
  for (const std::string& k : required)
    if (!props || !props->contains(k)) members.push_back(Pair(b, b->Literal(k), b->RawText(ValueStops())));
  if (members.empty() && !closed) return FreePairs(b);
  return b->Seq(std::move(members));
}

}  // namespace pg
