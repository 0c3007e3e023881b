// Value <-> JSON: tojson (Python's json.dumps layout, ensure_ascii optional,
// sorted keys optional) and the request's JSON as template values. Part of
// jinja_value.h.
#include <cmath>
#include <cstdio>

#include "chat/jinja_value.h"

namespace pg::jinja {

namespace {

void JsonString(std::string& out, const std::string& s, bool ensure_ascii) {
  out.push_back('"');
  for (char32_t c : DecodeUtf8(s)) {
    char buf[16];
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c > 0x7E && c != 0x7F) || (c >= 0xDC80 && c <= 0xDCFF)) {
      if (c >= 0x10000) {
        char32_t x = c - 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (x >> 10)),
                      static_cast<unsigned>(0xDC00 + (x & 0x3FF)));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      AppendUtf8(out, c);
    }
  }
  out.push_back('"');
}

void JsonValue(std::string& out, const Value& v, const JsonOptions& opt, int depth) {
  if (depth > kMaxValueDepth) Fail("tojson: value nested too deeply (circular reference?)");
  auto newline = [&](int level) {
    if (!opt.pretty) return;
    out.push_back('\n');
    for (int i = 0; i < level; ++i) out += opt.indent;
  };
  switch (v.kind()) {
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: {
      double d = v.as_double();
      if (std::isnan(d)) {
        out += "NaN";
      } else if (std::isinf(d)) {
        out += d < 0 ? "-Infinity" : "Infinity";
      } else {
        out += PyFloatRepr(d);
      }
      return;
    }
    case Value::Kind::kString: JsonString(out, v.as_string(), opt.ensure_ascii); return;
    case Value::Kind::kList: {
      const ValueList& l = v.list();
      if (l.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += opt.item_sep;
        newline(depth + 1);
        JsonValue(out, l[i], opt, depth + 1);
      }
      newline(depth);
      out.push_back(']');
      return;
    }
    case Value::Kind::kDict: {
      if (v.is_namespace()) Fail("Object of type Namespace is not JSON serializable");
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.dict().items) items.push_back(&kv);
      if (items.empty()) {
        out += "{}";
        return;
      }
      if (opt.sort_keys) {
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      }
      out.push_back('{');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += opt.item_sep;
        newline(depth + 1);
        JsonString(out, items[i]->first, opt.ensure_ascii);
        out += opt.key_sep;
        JsonValue(out, items[i]->second, opt, depth + 1);
      }
      newline(depth);
      out.push_back('}');
      return;
    }
    case Value::Kind::kUndefined:
    case Value::Kind::kCallable: Fail(std::string("Object of type ") + v.TypeName() + " is not JSON serializable");
  }
}

}  // namespace

std::string ToJson(const Value& v, const JsonOptions& opt) {
  std::string out;
  JsonValue(out, v, opt, 0);
  return out;
}

Value FromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::None();
    case nlohmann::json::value_t::boolean: return Value::Bool(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::Int(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::Float(j.get<double>());
    case nlohmann::json::value_t::string: return Value::String(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(FromJson(e));
      return Value::List(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Value d = Value::Dict();
      for (auto it = j.begin(); it != j.end(); ++it) d.dict().items.emplace_back(it.key(), FromJson(it.value()));
      return d;
    }
    default: return Value::None();  // binary / discarded: not produced by JSON parsing
  }
}

}  // namespace pg::jinja
