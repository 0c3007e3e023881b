// The Jinja tests of the subset (`x is defined`, `is divisibleby(3)`, ...)
// and its global functions (namespace, dict, range, raise_exception, ...),
// declared in jinja_builtins.h.
#include <unordered_set>

#include "chat/jinja_builtins.h"

namespace pg::jinja {

// ---------------------------------------------------------------- tests

bool HasTest(std::string_view name) {
  static const std::unordered_set<std::string_view> kTests = {
      "defined", "undefined", "none",     "boolean",     "false",  "true",  "integer",     "float",  "number", "string",
      "mapping", "iterable",  "sequence", "callable",    "sameas", "eq",    "equalto",     "==",     "ne",     "!=",
      "lt",      "lessthan",  "<",        "le",          "<=",     "gt",    "greaterthan", ">",      "ge",     ">=",
      "in",      "odd",       "even",     "divisibleby", "lower",  "upper", "escaped",     "filter", "test"};
  return kTests.count(name) > 0;
}

bool ApplyTest(Interpreter& in, const std::string& name, const Value& v, CallArgs& a) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable" || name == "sequence") return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
  if (name == "callable") return v.is_callable();
  if (name == "escaped") return false;
  if (name == "lower") return v.is_string() && AsciiLower(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && AsciiUpper(v.as_string()) == v.as_string();
  if (name == "filter") return v.is_string() && HasFilter(v.as_string());
  if (name == "test") return v.is_string() && HasTest(v.as_string());
  const Value* arg = a.Get(0, name == "divisibleby" ? "num" : "other");
  if (name == "odd" || name == "even") {
    if (!v.is_int() && !v.is_bool()) Fail("test '" + name + "' needs an integer");
    int64_t r = v.as_int() % 2;
    return name == "odd" ? r != 0 : r == 0;
  }
  if (!arg) Fail("test '" + name + "' requires an argument");
  if (name == "sameas") {
    if (v.kind() != arg->kind()) return false;
    if (v.is_list()) return &v.list() == &arg->list();
    if (v.kind() == Value::Kind::kDict) return &v.dict() == &arg->dict();
    return Equals(v, *arg);
  }
  if (name == "eq" || name == "equalto" || name == "==") return Equals(v, *arg);
  if (name == "ne" || name == "!=") return !Equals(v, *arg);
  if (name == "lt" || name == "lessthan" || name == "<") return Less(v, *arg);
  if (name == "le" || name == "<=") return !Less(*arg, v);
  if (name == "gt" || name == "greaterthan" || name == ">") return Less(*arg, v);
  if (name == "ge" || name == ">=") return !Less(v, *arg);
  if (name == "in") return Contains(*arg, v);
  if (name == "divisibleby") {
    if (!v.is_int() || !arg->is_int()) Fail("test 'divisibleby' needs integers");
    if (arg->as_int() == 0) Fail("integer modulo by zero");
    return v.as_int() % arg->as_int() == 0;
  }
  (void)in;
  Fail("no test named '" + name + "'");
}

// ---------------------------------------------------------------- globals

void AddBuiltinGlobals(Interpreter& in, Value& globals) {
  Interpreter* ip = &in;
  globals.dict().Set("namespace", Value::Function("namespace", [ip](CallArgs& a) {
                       Value ns = Value::Namespace();
                       for (const Value& p : a.positional) {
                         if (!p.is_dict()) Fail("namespace() positional argument must be a mapping");
                         for (const auto& [k, v] : p.dict().items) ns.dict().Set(k, v);
                       }
                       for (const auto& [k, v] : a.keyword) ns.dict().Set(k, v);
                       ip->TrackNamespace(ns);
                       return ns;
                     }));
  globals.dict().Set("dict", Value::Function("dict", [](CallArgs& a) {
                       Value d = Value::Dict();
                       for (const Value& p : a.positional) {
                         if (!p.is_dict()) Fail("dict() positional argument must be a mapping");
                         for (const auto& [k, v] : p.dict().items) d.dict().Set(k, v);
                       }
                       for (const auto& [k, v] : a.keyword) d.dict().Set(k, v);
                       return d;
                     }));
  globals.dict().Set(
      "range", Value::Function("range", [ip](CallArgs& a) {
        auto arg = [&](size_t i) {
          const Value& v = a.positional[i];
          if (!v.is_int() && !v.is_bool()) Fail("range() arguments must be integers");
          return v.as_int();
        };
        if (a.positional.empty() || a.positional.size() > 3) Fail("range expected 1 to 3 integer arguments");
        int64_t start = 0, stop, step = 1;
        if (a.positional.size() == 1) {
          stop = arg(0);
        } else {
          start = arg(0);
          stop = arg(1);
          if (a.positional.size() == 3) step = arg(2);
        }
        if (step == 0) Fail("range() arg 3 must not be zero");
        // Element count computed in 128 bits, so extreme bounds cannot overflow.
        __int128 span = static_cast<__int128>(stop) - start;
        __int128 count =
            step > 0 ? (span > 0 ? (span + step - 1) / step : 0)
                     : (span < 0 ? (-span + (-static_cast<__int128>(step)) - 1) / -static_cast<__int128>(step) : 0);
        if (count > static_cast<__int128>(ip->limits().max_list_items)) ip->CheckListSize(SIZE_MAX);
        ip->Step(static_cast<int64_t>(count));
        ValueList items;
        items.reserve(static_cast<size_t>(count));
        for (int64_t k = 0; k < static_cast<int64_t>(count); ++k) items.push_back(Value::Int(start + k * step));
        return Value::List(std::move(items));
      }));
}

}  // namespace pg::jinja
