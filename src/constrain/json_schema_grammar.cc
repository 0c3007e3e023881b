#include "constrain/json_schema_grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// Grammar nodes one schema may produce before it is refused as too large.
constexpr size_t kMaxNodes = 200000;
// A minItems / maxItems beyond this is refused (the count lives in a frame, so
// this is a sanity bound, not a cost).
constexpr int64_t kMaxItemsBound = 1 << 20;  // also bounds minLength / maxLength

const std::set<std::string>& Annotations() {
  static const std::set<std::string> k = {"title", "description", "default", "examples",   "$schema",
                                          "$id",   "$comment",    "$defs",   "definitions"};
  return k;
}

const std::set<std::string>& Supported() {
  static const std::set<std::string> k = {"type",     "properties", "required", "additionalProperties",
                                          "items",    "minItems",   "maxItems", "enum",
                                          "const",    "anyOf",      "$ref",     "minLength",
                                          "maxLength"};
  return k;
}

std::string Compact(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

class SchemaCompiler {
 public:
  SchemaCompiler(const json& root, std::string where, GrammarBuilder* b)
      : root_(root), where_(std::move(where)), b_(b) {}

  Result<NodeId> Compile(const json& s, const std::string& path) {
    if (b_->size() > kMaxNodes)
      return InvalidArgument(
          fmt::format("{}: the schema is too large to compile (over {} grammar nodes)", where_, kMaxNodes));
    if (s.is_boolean()) {
      if (s.get<bool>()) return b_->JsonValue();
      return InvalidArgument(fmt::format("{}: the schema at {} is false, which no value satisfies", where_, path));
    }
    if (!s.is_object()) return InvalidArgument(fmt::format("{}: the schema at {} must be an object", where_, path));
    for (const auto& [key, value] : s.items()) {
      if (!Supported().count(key) && !Annotations().count(key))
        return Unimplemented(fmt::format("unsupported JSON schema keyword '{}' at {} (in {})", key, path, where_));
    }
    if (s.contains("$ref")) return Ref(s, path);
    if (s.contains("const")) return b_->Literal(Compact(s["const"]));
    if (s.contains("enum")) return Enum(s["enum"], path);
    if (s.contains("anyOf")) return AnyOf(s, path);
    auto type = s.find("type");
    if (type == s.end()) {
      if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties"))
        return Object(s, path);
      if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) return Array(s, path);
      return b_->JsonValue();
    }
    if (type->is_string()) return Typed(s, type->get<std::string>(), path);
    if (!type->is_array() || type->empty())
      return InvalidArgument(
          fmt::format("{}: 'type' at {} must be a string or a non-empty array of strings", where_, path));
    std::vector<NodeId> alts;
    for (const json& t : *type) {
      if (!t.is_string()) return InvalidArgument(fmt::format("{}: 'type' at {} must hold strings", where_, path));
      Result<NodeId> n = Typed(s, t.get<std::string>(), path);
      if (!n.ok()) return n.status();
      alts.push_back(*n);
    }
    return b_->Choice(std::move(alts));
  }

 private:
  // `keyword` ($ref, anyOf) takes the whole schema s: beside it only
  // annotations, anything else unsupported.
  Status OnlyAnnotationsBeside(const json& s, const std::string& keyword, const std::string& path) const {
    for (const auto& [key, value] : s.items()) {
      if (key != keyword && !Annotations().count(key))
        return Unimplemented(
            fmt::format("unsupported JSON schema keyword '{}' beside '{}' at {} (in {})", key, keyword, path, where_));
    }
    return Status();
  }

  Result<NodeId> Typed(const json& s, const std::string& type, const std::string& path) {
    if (type == "object") return Object(s, path);
    if (type == "array") return Array(s, path);
    if (type == "string") return String(s, path);
    if (type == "number") return b_->Number(false);
    if (type == "integer") return b_->Number(true);
    if (type == "boolean") return b_->Choice({b_->Literal("true"), b_->Literal("false")});
    if (type == "null") return b_->Literal("null");
    return InvalidArgument(fmt::format("{}: unknown type '{}' at {}", where_, type, path));
  }

  Result<NodeId> Ref(const json& s, const std::string& path) {
    PG_RETURN_IF_ERROR(OnlyAnnotationsBeside(s, "$ref", path));
    const json& ref = s["$ref"];
    if (!ref.is_string()) return InvalidArgument(fmt::format("{}: '$ref' at {} must be a string", where_, path));
    const std::string r = ref.get<std::string>();
    // A $ref back to a definition still being compiled, with no object or
    // array entered since, is a cycle that never produces a value ("a": {"$ref":
    // "#/$defs/a"}, or through anyOf alternatives): ill-founded, refused.
    if (std::find(bare_refs_.begin(), bare_refs_.end(), r) != bare_refs_.end())
      return InvalidArgument(
          fmt::format("{}: '$ref' \"{}\" at {} refers back to itself before any value is written "
                      "(an ill-founded cycle: each pass through it must write an object or array first)",
                      where_, r, path));
    if (auto it = refs_.find(r); it != refs_.end()) return it->second;
    std::string section, name;
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      if (r.rfind(prefix, 0) == 0) {
        section = std::string(prefix).substr(2, std::string(prefix).size() - 3);
        name = r.substr(std::string(prefix).size());
      }
    }
    if (section.empty() || name.empty() || name.find('/') != std::string::npos)
      return Unimplemented(
          fmt::format("unsupported JSON schema keyword '$ref' value '{}' at {} (in {}): only "
                      "\"#/$defs/NAME\" and \"#/definitions/NAME\" are supported",
                      r, path, where_));
    auto defs = root_.find(section);
    if (defs == root_.end() || !defs->is_object() || !defs->contains(name))
      return InvalidArgument(fmt::format("{}: '$ref' \"{}\" at {} points at nothing", where_, r, path));
    const NodeId slot = b_->Placeholder();
    refs_[r] = slot;  // a recursive $ref inside the target finds the slot
    bare_refs_.push_back(r);
    Result<NodeId> target = Compile((*defs)[name], r);
    bare_refs_.pop_back();
    if (!target.ok()) return target.status();
    b_->Fill(slot, *target);
    return slot;
  }

  Result<NodeId> Enum(const json& values, const std::string& path) {
    if (!values.is_array() || values.empty())
      return InvalidArgument(fmt::format("{}: 'enum' at {} must be a non-empty array", where_, path));
    std::vector<NodeId> alts;
    for (const json& v : values) alts.push_back(b_->Literal(Compact(v)));
    return b_->Choice(std::move(alts));
  }

  Result<NodeId> AnyOf(const json& s, const std::string& path) {
    PG_RETURN_IF_ERROR(OnlyAnnotationsBeside(s, "anyOf", path));
    const json& alts = s["anyOf"];
    if (!alts.is_array() || alts.empty())
      return InvalidArgument(fmt::format("{}: 'anyOf' at {} must be a non-empty array", where_, path));
    std::vector<NodeId> nodes;
    for (size_t i = 0; i < alts.size(); ++i) {
      Result<NodeId> n = Compile(alts[i], fmt::format("{}/anyOf/{}", path, i));
      if (!n.ok()) return n.status();
      nodes.push_back(*n);
    }
    return b_->Choice(std::move(nodes));
  }

  Result<NodeId> String(const json& s, const std::string& path) {
    int64_t bounds[2] = {0, -1};
    const char* names[2] = {"minLength", "maxLength"};
    if (!Bounds(s, names, path, bounds)) return InvalidArgument(bounds_error_);
    return b_->String(static_cast<uint32_t>(bounds[0]),
                      bounds[1] < 0 ? Grammar::kUnbounded : static_cast<uint32_t>(bounds[1]));
  }

  // Reads a (min, max) pair of non-negative integer keywords into bounds
  // (-1 = max absent); false with bounds_error_ set when malformed.
  bool Bounds(const json& s, const char* const names[2], const std::string& path, int64_t bounds[2]) {
    for (int i = 0; i < 2; ++i) {
      auto it = s.find(names[i]);
      if (it == s.end()) continue;
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > kMaxItemsBound) {
        bounds_error_ =
            fmt::format("{}: '{}' at {} must be an integer in [0, {}]", where_, names[i], path, kMaxItemsBound);
        return false;
      }
      bounds[i] = it->get<int64_t>();
    }
    if (bounds[1] >= 0 && bounds[0] > bounds[1]) {
      bounds_error_ =
          fmt::format("{}: '{}' {} is above '{}' {} at {}", where_, names[0], bounds[0], names[1], bounds[1], path);
      return false;
    }
    return true;
  }

  Result<NodeId> Object(const json& s, const std::string& path);
  Result<NodeId> Array(const json& s, const std::string& path);

  const json& root_;
  std::string where_;
  GrammarBuilder* b_;
  std::map<std::string, NodeId> refs_;  // $ref text -> its node (filled once compiled)
  // The $refs being compiled since the innermost object or array began (a
  // value's first character): one of them met again is an ill-founded cycle.
  std::vector<std::string> bare_refs_;
  // Object() and Array() write '{' / '[' before their members: a $ref met
  // inside them again is well-founded recursion.
  struct ValueStarts {
    explicit ValueStarts(std::vector<std::string>* refs) : refs_(refs), saved_(std::move(*refs)) { refs->clear(); }
    ~ValueStarts() { *refs_ = std::move(saved_); }
    std::vector<std::string>* refs_;
    std::vector<std::string> saved_;
  };
  std::string bounds_error_;
};

Result<NodeId> SchemaCompiler::Object(const json& s, const std::string& path) {
  ValueStarts starts(&bare_refs_);
  const json* props = s.contains("properties") ? &s["properties"] : nullptr;
  if (props && !props->is_object())
    return InvalidArgument(fmt::format("{}: 'properties' at {} must be an object", where_, path));
  bool closed = false;
  if (auto ap = s.find("additionalProperties"); ap != s.end()) {
    if (ap->is_boolean())
      closed = !ap->get<bool>();
    else
      return Unimplemented(
          fmt::format("unsupported JSON schema keyword 'additionalProperties' as a schema at {} (in "
                      "{}): only true or false",
                      path, where_));
  }
  std::set<std::string> required;
  if (auto rq = s.find("required"); rq != s.end()) {
    if (!rq->is_array()) return InvalidArgument(fmt::format("{}: 'required' at {} must be an array", where_, path));
    for (const json& k : *rq) {
      if (!k.is_string()) return InvalidArgument(fmt::format("{}: 'required' at {} must hold strings", where_, path));
      required.insert(k.get<std::string>());
    }
  }
  // (key, value node, required) in the order written.
  std::vector<std::tuple<std::string, NodeId, bool>> members;
  if (props) {
    for (const auto& [key, sub] : props->items()) {
      Result<NodeId> n = Compile(sub, fmt::format("{}/properties/{}", path, key));
      if (!n.ok()) return n.status();
      members.emplace_back(key, *n, required.count(key) > 0);
    }
  }
  for (const std::string& k : required) {
    if (!props || !props->contains(k)) members.emplace_back(k, b_->JsonValue(), true);
  }
  if (members.empty() && !closed) return b_->JsonObject();
  // rest[i][first]: the members from i on, `first` when none was written yet.
  const size_t n = members.size();
  std::vector<std::array<NodeId, 2>> rest(n + 1);
  rest[n][0] = rest[n][1] = b_->Literal("}");
  for (size_t i = n; i-- > 0;) {
    const auto& [key, value, req] = members[i];
    const NodeId member =
        b_->Seq({b_->Literal(GrammarBuilder::Quoted(key)), b_->Ws(), b_->Literal(":"), b_->Ws(), value, b_->Ws()});
    for (int first = 0; first < 2; ++first) {
      const NodeId written =
          first ? b_->Seq({member, rest[i + 1][0]}) : b_->Seq({b_->Literal(","), b_->Ws(), member, rest[i + 1][0]});
      rest[i][first] = req ? written : b_->Choice({written, rest[i + 1][first]});
    }
  }
  return b_->Seq({b_->Literal("{"), b_->Ws(), rest[0][1]});
}

Result<NodeId> SchemaCompiler::Array(const json& s, const std::string& path) {
  ValueStarts starts(&bare_refs_);
  NodeId item;
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_array())
      return Unimplemented(
          fmt::format("unsupported JSON schema keyword 'items' as an array (tuple form) at {} (in "
                      "{})",
                      path, where_));
    Result<NodeId> n = Compile(*it, path + "/items");
    if (!n.ok()) return n.status();
    item = *n;
  } else {
    item = b_->JsonValue();
  }
  int64_t bounds[2] = {0, -1};
  const char* names[2] = {"minItems", "maxItems"};
  if (!Bounds(s, names, path, bounds)) return InvalidArgument(bounds_error_);
  const uint32_t max = bounds[1] < 0 ? Grammar::kUnbounded : static_cast<uint32_t>(bounds[1]);
  const NodeId sep = b_->Seq({b_->Ws(), b_->Literal(","), b_->Ws()});
  return b_->Seq({b_->Literal("["), b_->Ws(), b_->Repeat(item, sep, static_cast<uint32_t>(bounds[0]), max), b_->Ws(),
                  b_->Literal("]")});
}

}  // namespace

Result<NodeId> AddJsonSchema(const json& schema, const std::string& where, GrammarBuilder* builder) {
  return SchemaCompiler(schema, where, builder).Compile(schema, "#");
}

Result<NodeId> AddJsonSubschema(const json& root, const json& sub, const std::string& path, const std::string& where,
                                GrammarBuilder* builder) {
  return SchemaCompiler(root, where, builder).Compile(sub, path);
}

}  // namespace pg
