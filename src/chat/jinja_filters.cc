// The filters of the Jinja subset (declared in jinja_builtins.h). Argument
// names and defaults follow Jinja2 3.1; `tojson` follows Hugging Face's
// override: tojson(ensure_ascii=False, indent=None, separators=None,
// sort_keys=False).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "chat/jinja_builtins.h"

namespace pg::jinja {
namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

bool BoolArg(const Value* v, bool dflt) { return v ? v->Truthy() : dflt; }

// Jinja's attribute getter: "a.b.0" walks items/attributes, digits index.
Value AttrPath(Interpreter& in, const Value& v, const Value& path) {
  if (path.is_int()) return in.GetItem(v, path);
  if (!path.is_string()) Fail("attribute must be a string");
  Value cur = v;
  const std::string& p = path.as_string();
  size_t start = 0;
  while (true) {
    size_t dot = p.find('.', start);
    std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit) && part.size() < 18;
    cur = in.GetItem(cur, digits ? Value::Int(std::stoll(part)) : Value::String(part));
    if (dot == std::string::npos) return cur;
    if (cur.is_undefined()) return cur;
    start = dot + 1;
  }
}

// Sort/compare key: the attribute if given, lowercased strings unless
// case-sensitive.
Value SortKey(Interpreter& in, const Value& v, const Value* attribute, bool case_sensitive) {
  Value k = (attribute && !attribute->is_none()) ? AttrPath(in, v, *attribute) : v;
  if (!case_sensitive && k.is_string()) return Value::String(AsciiLower(k.as_string()));
  return k;
}

Value FAbs(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_float()) return Value::Float(std::fabs(v.as_double()));
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) Fail("integer overflow");
    return Value::Int(std::llabs(v.as_int()));
  }
  Fail(std::string("bad operand type for abs(): '") + v.TypeName() + "'");
}

Value FAttr(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* name = a.Get(0, "name");
  if (!name || !name->is_string()) Fail("attr filter needs a name");
  return in.GetAttr(v, name->as_string());
}

Value FCapitalize(Interpreter&, const Value& v, CallArgs&) {
  std::string s = AsciiLower(Str(v));
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return Value::String(std::move(s));
}

Value FLength(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) return Value::Int(CodePointLength(v.as_string()));
  if (v.is_list()) return Value::Int(static_cast<int64_t>(v.list().size()));
  if (v.is_dict()) return Value::Int(static_cast<int64_t>(v.dict().items.size()));
  if (v.is_undefined()) return Value::Int(0);
  Fail(std::string("object of type '") + v.TypeName() + "' has no len()");
}

Value FDefault(Interpreter&, const Value& v, CallArgs& a) {
  const Value* dflt = a.Get(0, "default_value");
  bool boolean = BoolArg(a.Get(1, "boolean"), false);
  if (v.is_undefined() || (boolean && !v.Truthy())) return dflt ? *dflt : Value::String("");
  return v;
}

Value FDictsort(Interpreter& in, const Value& v, CallArgs& a) {
  if (!v.is_dict()) Fail("dictsort expects a mapping");
  bool case_sensitive = BoolArg(a.Get(0, "case_sensitive"), false);
  const Value* by = a.Get(1, "by");
  bool by_value = by && by->is_string() && by->as_string() == "value";
  if (by && !(by->is_string() && (by->as_string() == "key" || by->as_string() == "value"))) {
    Fail("You can only sort by either \"key\" or \"value\"");
  }
  bool reverse = BoolArg(a.Get(2, "reverse"), false);
  ValueList items;
  for (const auto& [k, val] : v.dict().items) items.push_back(Value::Tuple({Value::String(k), val}));
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    Value kx = SortKey(in, x.list()[by_value ? 1 : 0], nullptr, case_sensitive);
    Value ky = SortKey(in, y.list()[by_value ? 1 : 0], nullptr, case_sensitive);
    return reverse ? Less(ky, kx) : Less(kx, ky);
  });
  return Value::List(std::move(items));
}

Value FEscape(Interpreter& in, const Value& v, CallArgs&) {
  std::string out;
  for (char c : Str(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  in.ChargeBytes(out.size());
  return Value::String(std::move(out));
}

Value FFirst(Interpreter&, const Value& v, CallArgs&) {
  ValueList items = Iterate(v);
  return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
}

Value FLast(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_dict()) Fail("'dict' object is not reversible");
  ValueList items = Iterate(v);
  return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
}

bool ParseInt(std::string s, int64_t* out) {
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  size_t b = s.find_first_not_of(" \t\n\r\f\v"), e = s.find_last_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return false;
  s = s.substr(b, e - b + 1);
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || errno == ERANGE) return false;
  *out = v;
  return true;
}

bool ParseFloat(const std::string& s, double* out) {
  size_t b = s.find_first_not_of(" \t\n\r\f\v"), e = s.find_last_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return false;
  std::string t = s.substr(b, e - b + 1);
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return false;
  *out = v;
  return true;
}

Value FInt(Interpreter&, const Value& v, CallArgs& a) {
  const Value* dflt = a.Get(0, "default");
  Value fallback = dflt ? *dflt : Value::Int(0);
  if (v.is_int() || v.is_bool()) return Value::Int(v.as_int());
  double d;
  if (v.is_float() || (v.is_string() && ParseFloat(v.as_string(), &d))) {
    int64_t i;
    if (v.is_string() && ParseInt(v.as_string(), &i)) return Value::Int(i);
    d = v.is_float() ? v.as_double() : d;
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(std::trunc(d)));
  }
  return fallback;
}

Value FFloat(Interpreter&, const Value& v, CallArgs& a) {
  const Value* dflt = a.Get(0, "default");
  if (v.is_number()) return Value::Float(v.as_double());
  double d;
  if (v.is_string() && ParseFloat(v.as_string(), &d)) return Value::Float(d);
  return dflt ? *dflt : Value::Float(0.0);
}

Value FIndent(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* width = a.Get(0, "width");
  std::string pad = !width ? "    "
                    : width->is_string()
                        ? width->as_string()
                        : std::string(static_cast<size_t>(std::clamp<int64_t>(width->as_int(), 0, 1 << 16)), ' ');
  bool first = BoolArg(a.Get(1, "first"), false);
  bool blank = BoolArg(a.Get(2, "blank"), false);
  std::string s = Str(v) + "\n";
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(s.substr(start, i - start));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += "\n";
      if (blank || !lines[i].empty()) out += pad;
    }
    out += lines[i];
    in.ChargeBytes(out.size());
  }
  if (first) out = pad + out;
  return Value::String(std::move(out));
}

Value FItems(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::List();
  if (!v.is_dict()) Fail("Can only get item pairs from a mapping.");
  ValueList items;
  for (const auto& [k, val] : v.dict().items) items.push_back(Value::Tuple({Value::String(k), val}));
  return Value::List(std::move(items));
}

Value FJoin(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* sep = a.Get(0, "d");
  const Value* attribute = a.Get(1, "attribute");
  std::string d = sep ? Str(*sep) : "";
  std::string out;
  bool first = true;
  for (const Value& item : Iterate(v)) {
    if (!first) out += d;
    first = false;
    out += Str(attribute && !attribute->is_none() ? AttrPath(in, item, *attribute) : item);
    in.ChargeBytes(out.size());
  }
  return Value::String(std::move(out));
}

Value FList(Interpreter&, const Value& v, CallArgs&) { return Value::List(Iterate(v)); }
Value FLower(Interpreter&, const Value& v, CallArgs&) { return Value::String(AsciiLower(Str(v))); }
Value FUpper(Interpreter&, const Value& v, CallArgs&) { return Value::String(AsciiUpper(Str(v))); }
Value FSafe(Interpreter&, const Value& v, CallArgs&) { return v; }
Value FString(Interpreter&, const Value& v, CallArgs&) { return Value::String(Str(v)); }

Value FMap(Interpreter& in, const Value& v, CallArgs& a) {
  ValueList out;
  const Value* attribute = nullptr;
  const Value* dflt = nullptr;
  for (const auto& [k, val] : a.keyword) {
    if (k == "attribute") attribute = &val;
    if (k == "default") dflt = &val;
  }
  if (attribute) {
    for (const Value& item : Iterate(v)) {
      Value r = AttrPath(in, item, *attribute);
      out.push_back(r.is_undefined() && dflt ? *dflt : r);
    }
    return Value::List(std::move(out));
  }
  if (a.positional.empty() || !a.positional[0].is_string()) Fail("map requires a filter name or attribute=");
  std::string filter = a.positional[0].as_string();
  if (!HasFilter(filter)) Fail("no filter named '" + filter + "'");
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const Value& item : Iterate(v)) {
    in.Step();
    CallArgs call = rest;
    out.push_back(ApplyFilter(in, filter, item, call));
  }
  return Value::List(std::move(out));
}

Value MinMax(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
  bool case_sensitive = BoolArg(a.Get(0, "case_sensitive"), false);
  const Value* attribute = a.Get(1, "attribute");
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undefined(std::string("No aggregated item, sequence was empty."));
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    Value ki = SortKey(in, items[i], attribute, case_sensitive);
    Value kb = SortKey(in, items[best], attribute, case_sensitive);
    if (want_max ? Less(kb, ki) : Less(ki, kb)) best = i;
  }
  return items[best];
}
Value FMax(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, true); }
Value FMin(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, false); }

// select / reject / selectattr / rejectattr.
Value SelectImpl(Interpreter& in, const Value& v, CallArgs& a, bool by_attr, bool keep_if) {
  size_t next = 0;
  Value attribute;
  if (by_attr) {
    if (a.positional.empty()) Fail("selectattr/rejectattr need an attribute");
    attribute = a.positional[next++];
  }
  std::string test;
  if (next < a.positional.size()) {
    if (!a.positional[next].is_string()) Fail("test name must be a string");
    test = a.positional[next++].as_string();
    if (!HasTest(test)) Fail("no test named '" + test + "'");
  }
  CallArgs test_args;
  test_args.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(next), a.positional.end());
  ValueList out;
  for (const Value& item : Iterate(v)) {
    in.Step();
    Value x = by_attr ? AttrPath(in, item, attribute) : item;
    bool r = test.empty() ? x.Truthy() : ApplyTest(in, test, x, test_args);
    if (r == keep_if) out.push_back(item);
  }
  return Value::List(std::move(out));
}
Value FSelect(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, true); }
Value FReject(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, false); }
Value FSelectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, true); }
Value FRejectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, false); }

Value FReplace(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* old = a.Get(0, "old");
  const Value* repl = a.Get(1, "new");
  const Value* count = a.Get(2, "count");
  if (!old || !repl) Fail("replace needs old and new");
  std::string r = PyReplace(Str(v), Str(*old), Str(*repl), count && !count->is_none() ? count->as_int() : -1);
  in.ChargeBytes(r.size());
  return Value::String(std::move(r));
}

Value FReverse(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) {
    std::u32string u = DecodeUtf8(v.as_string());
    std::reverse(u.begin(), u.end());
    return Value::String(EncodeUtf8(u));
  }
  ValueList items = Iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

Value FRound(Interpreter&, const Value& v, CallArgs& a) {
  if (!v.is_number()) Fail("round expects a number");
  int64_t precision = a.Get(0, "precision") ? a.Get(0, "precision")->as_int() : 0;
  const Value* method = a.Get(1, "method");
  std::string m = method ? Str(*method) : "common";
  double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -300, 300)));
  double x = v.as_double() * scale;
  double r;
  if (m == "common") {
    r = std::nearbyint(x);  // round half to even, as Python's round()
  } else if (m == "ceil") {
    r = std::ceil(x);
  } else if (m == "floor") {
    r = std::floor(x);
  } else {
    Fail("method must be 'common', 'ceil' or 'floor'");
  }
  return Value::Float(r / scale);
}

Value FSort(Interpreter& in, const Value& v, CallArgs& a) {
  bool reverse = BoolArg(a.Get(0, "reverse"), false);
  bool case_sensitive = BoolArg(a.Get(1, "case_sensitive"), false);
  const Value* attribute = a.Get(2, "attribute");
  ValueList items = Iterate(v);
  std::vector<std::pair<Value, size_t>> keyed;
  for (size_t i = 0; i < items.size(); ++i) keyed.emplace_back(SortKey(in, items[i], attribute, case_sensitive), i);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? Less(y.first, x.first) : Less(x.first, y.first);
  });
  ValueList out;
  for (const auto& [k, i] : keyed) out.push_back(items[i]);
  return Value::List(std::move(out));
}

Value FSum(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* attribute = a.Get(0, "attribute");
  const Value* start = a.Get(1, "start");
  Value total = start ? *start : Value::Int(0);
  for (const Value& item : Iterate(v)) {
    Value x = attribute && !attribute->is_none() ? AttrPath(in, item, *attribute) : item;
    if (!x.is_number() || !total.is_number()) Fail("sum supports numbers only");
    if (x.is_float() || total.is_float()) {
      total = Value::Float(total.as_double() + x.as_double());
    } else {
      int64_t r;
      if (__builtin_add_overflow(total.as_int(), x.as_int(), &r)) Fail("integer overflow");
      total = Value::Int(r);
    }
  }
  return total;
}

Value FTitle(Interpreter&, const Value& v, CallArgs&) {
  std::string s = Str(v);
  bool word_start = true;
  for (char& c : s) {
    bool sep = c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '(' ||
               c == '{' || c == '[' || c == '<';
    if (sep) {
      word_start = true;
      continue;
    }
    if (c >= 'a' && c <= 'z' && word_start)
      c = static_cast<char>(c - 'a' + 'A');
    else if (c >= 'A' && c <= 'Z' && !word_start)
      c = static_cast<char>(c - 'A' + 'a');
    word_start = false;
  }
  return Value::String(std::move(s));
}

Value FToJson(Interpreter& in, const Value& v, CallArgs& a) {
  JsonOptions opt;
  opt.ensure_ascii = BoolArg(a.Get(0, "ensure_ascii"), false);
  const Value* indent = a.Get(1, "indent");
  const Value* seps = a.Get(2, "separators");
  opt.sort_keys = BoolArg(a.Get(3, "sort_keys"), false);
  if (indent && !indent->is_none()) {
    opt.pretty = true;
    if (indent->is_string()) {
      opt.indent = indent->as_string();
    } else if (indent->is_int() || indent->is_bool()) {
      opt.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(indent->as_int(), 0, 1 << 10)), ' ');
    } else {
      Fail("tojson: indent must be an integer, a string or none");
    }
    opt.item_sep.assign(1, ',');  // json.dumps default with indent
  }
  if (seps && !seps->is_none()) {
    if (!seps->is_list() || seps->list().size() != 2 || !seps->list()[0].is_string() || !seps->list()[1].is_string()) {
      Fail("tojson: separators must be a pair of strings");
    }
    opt.item_sep = seps->list()[0].as_string();
    opt.key_sep = seps->list()[1].as_string();
  }
  std::string s = ToJson(v, opt);
  in.ChargeBytes(s.size());
  return Value::String(std::move(s));
}

Value FTrim(Interpreter&, const Value& v, CallArgs& a) {
  const Value* chars = a.Get(0, "chars");
  return Value::String(PyStrip(Str(v), chars ? *chars : Value::None(), true, true));
}

Value FUnique(Interpreter& in, const Value& v, CallArgs& a) {
  bool case_sensitive = BoolArg(a.Get(0, "case_sensitive"), false);
  const Value* attribute = a.Get(1, "attribute");
  ValueList out, seen;
  for (const Value& item : Iterate(v)) {
    Value k = SortKey(in, item, attribute, case_sensitive);
    in.Step(static_cast<int64_t>(seen.size()));
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return Equals(s, k); })) {
      seen.push_back(k);
      out.push_back(item);
    }
  }
  return Value::List(std::move(out));
}

Value FWordcount(Interpreter&, const Value& v, CallArgs&) {
  int64_t n = 0;
  bool in_word = false;
  for (unsigned char c : Str(v)) {
    bool w = std::isalnum(c) || c == '_' || c >= 0x80;
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::Int(n);
}

const std::unordered_map<std::string_view, FilterFn>& Filters() {
  static const std::unordered_map<std::string_view, FilterFn> kFilters = {
      {"abs", FAbs},           {"attr", FAttr},       {"capitalize", FCapitalize},
      {"count", FLength},      {"d", FDefault},       {"default", FDefault},
      {"dictsort", FDictsort}, {"e", FEscape},        {"escape", FEscape},
      {"first", FFirst},       {"float", FFloat},     {"indent", FIndent},
      {"int", FInt},           {"items", FItems},     {"join", FJoin},
      {"last", FLast},         {"length", FLength},   {"list", FList},
      {"lower", FLower},       {"map", FMap},         {"max", FMax},
      {"min", FMin},           {"reject", FReject},   {"rejectattr", FRejectAttr},
      {"replace", FReplace},   {"reverse", FReverse}, {"round", FRound},
      {"safe", FSafe},         {"select", FSelect},   {"selectattr", FSelectAttr},
      {"sort", FSort},         {"string", FString},   {"sum", FSum},
      {"title", FTitle},       {"tojson", FToJson},   {"trim", FTrim},
      {"unique", FUnique},     {"upper", FUpper},     {"wordcount", FWordcount},
  };
  return kFilters;
}

}  // namespace

bool HasFilter(std::string_view name) { return Filters().count(name) > 0; }

Value ApplyFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Filters().find(name);
  if (it == Filters().end()) Fail("no filter named '" + name + "'");
  return it->second(in, input, args);
}

}  // namespace pg::jinja
