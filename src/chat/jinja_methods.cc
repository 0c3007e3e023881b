// Python methods on str/dict/list and the string helpers of the Jinja
// subset (declared in jinja_builtins.h).
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "chat/jinja_builtins.h"

namespace pg::jinja {

// ---------------------------------------------------------------- string helpers

namespace {

bool IsPySpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (c >= 0x1C && c <= 0x1F) ||
         c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}
bool IsAsciiLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAsciiAlpha(char c) { return IsAsciiLower(c) || IsAsciiUpper(c); }

const std::string& StrArg(const Value* v, const char* fn) {
  if (!v || !v->is_string()) Fail(std::string(fn) + "() argument must be str");
  return v->as_string();
}

int64_t IntArg(const Value* v, int64_t dflt, const char* fn) {
  if (!v || v->is_none()) return dflt;
  if (!v->is_int() && !v->is_bool()) Fail(std::string(fn) + "() argument must be int");
  return v->as_int();
}

Value SplitImpl(const std::string& s, const Value* sep_v, int64_t maxsplit, bool from_right) {
  ValueList parts;
  if (!sep_v || sep_v->is_none()) {
    std::u32string u = DecodeUtf8(s);
    std::vector<std::u32string> words;
    if (!from_right) {
      size_t i = 0;
      while (true) {
        while (i < u.size() && IsPySpace(u[i])) ++i;
        if (i >= u.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          words.push_back(u.substr(i));
          break;
        }
        size_t j = i;
        while (j < u.size() && !IsPySpace(u[j])) ++j;
        words.push_back(u.substr(i, j - i));
        i = j;
      }
    } else {
      int64_t i = static_cast<int64_t>(u.size()) - 1;
      while (true) {
        while (i >= 0 && IsPySpace(u[i])) --i;
        if (i < 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          words.push_back(u.substr(0, i + 1));
          break;
        }
        int64_t j = i;
        while (j >= 0 && !IsPySpace(u[j])) --j;
        words.push_back(u.substr(j + 1, i - j));
        i = j;
      }
      std::reverse(words.begin(), words.end());
    }
    for (auto& w : words) parts.push_back(Value::String(EncodeUtf8(w)));
    return Value::List(std::move(parts));
  }
  const std::string& sep = StrArg(sep_v, "split");
  if (sep.empty()) Fail("empty separator");
  std::vector<std::string> pieces;
  if (!from_right) {
    size_t start = 0;
    while (true) {
      size_t at = s.find(sep, start);
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(start));
        break;
      }
      pieces.push_back(s.substr(start, at - start));
      start = at + sep.size();
    }
  } else {
    size_t end = s.size();
    while (true) {
      size_t at = end >= sep.size() ? s.rfind(sep, end - sep.size()) : std::string::npos;
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(0, end));
        break;
      }
      pieces.push_back(s.substr(at + sep.size(), end - at - sep.size()));
      end = at;
    }
    std::reverse(pieces.begin(), pieces.end());
  }
  for (auto& p : pieces) parts.push_back(Value::String(std::move(p)));
  return Value::List(std::move(parts));
}

std::string PyTitle(const std::string& s) {
  std::string out = s;
  bool prev_cased = false;
  for (char& c : out) {
    if (IsAsciiAlpha(c)) {
      c = prev_cased ? static_cast<char>(std::tolower(c)) : static_cast<char>(std::toupper(c));
      prev_cased = true;
    } else {
      prev_cased = false;
    }
  }
  return out;
}

std::string PyCapitalize(const std::string& s) {
  std::string out = AsciiLower(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(out[0]));
  return out;
}

bool MatchesAffix(const std::string& s, const Value& arg, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string())
      Fail(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str");
    const std::string& x = a.as_string();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (arg.is_list()) {
    return std::any_of(arg.list().begin(), arg.list().end(), one);
  }
  return one(arg);
}

// str.format with {} / {0} / {name} fields and {{ }} escapes; no format specs.
std::string PyFormat(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}')
        ++i;
      else
        Fail("Single '}' encountered in format string");
      out.push_back('}');
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    size_t end = fmt.find('}', i);
    if (end == std::string::npos) Fail("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, end - i - 1);
    if (field.find_first_of(":!") != std::string::npos) Fail("format specs are not supported in str.format");
    const Value* v = nullptr;
    if (field.empty()) {
      v = auto_index < args.positional.size() ? &args.positional[auto_index] : nullptr;
      ++auto_index;
    } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
      size_t k = std::stoul(field);
      v = k < args.positional.size() ? &args.positional[k] : nullptr;
    } else {
      v = args.Get(SIZE_MAX, field);
    }
    if (!v) Fail("format field '" + field + "' has no value");
    out += Str(*v);
    i = end;
  }
  return out;
}

// str.splitlines(): \n, \r and \r\n end lines; no trailing empty line.
Value SplitLines(const std::string& s) {
  ValueList lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(Value::String(s.substr(start, i - start)));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < s.size()) lines.push_back(Value::String(s.substr(start)));
  return Value::List(std::move(lines));
}

// sep.join(seq): every item must be a string.
Value JoinWith(Interpreter& in, const std::string& sep, const Value& seq) {
  std::string out;
  bool first = true;
  for (const Value& v : Iterate(seq)) {
    if (!v.is_string()) Fail(std::string("sequence item: expected str instance, ") + v.TypeName() + " found");
    if (!first) out += sep;
    first = false;
    out += v.as_string();
    in.ChargeBytes(out.size());
  }
  return Value::String(std::move(out));
}

// str.isdigit() and the other character-class methods (nullopt: not one).
std::optional<Value> StringTest(const std::string& s, const std::string& name) {
  auto all_of = [&](auto pred) { return !s.empty() && std::all_of(s.begin(), s.end(), pred); };
  if (name == "isdigit") return Value::Bool(all_of([](char c) { return c >= '0' && c <= '9'; }));
  if (name == "isalpha") return Value::Bool(all_of(IsAsciiAlpha));
  if (name == "isalnum") return Value::Bool(all_of([](char c) { return IsAsciiAlpha(c) || (c >= '0' && c <= '9'); }));
  if (name == "isspace") return Value::Bool(all_of([](char c) { return IsPySpace(static_cast<unsigned char>(c)); }));
  const bool lower = std::any_of(s.begin(), s.end(), IsAsciiLower);
  const bool upper = std::any_of(s.begin(), s.end(), IsAsciiUpper);
  if (name == "islower") return Value::Bool(lower && !upper);
  if (name == "isupper") return Value::Bool(upper && !lower);
  return std::nullopt;
}

Value StringMethod(Interpreter& in, const std::string& s, const std::string& name, CallArgs& a) {
  const Value* a0 = a.Get(0, "");
  if (name == "startswith" || name == "endswith") {
    if (!a0) Fail(name + "() takes at least 1 argument");
    return Value::Bool(MatchesAffix(s, *a0, name == "startswith"));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    Value chars = a0 ? *a0 : Value::None();
    return Value::String(PyStrip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    return SplitImpl(s, a.Get(0, "sep"), IntArg(a.Get(1, "maxsplit"), -1, name.c_str()), name == "rsplit");
  }
  if (name == "upper") return Value::String(AsciiUpper(s));
  if (name == "lower") return Value::String(AsciiLower(s));
  if (name == "title") return Value::String(PyTitle(s));
  if (name == "capitalize") return Value::String(PyCapitalize(s));
  if (name == "replace") {
    std::string r = PyReplace(s, StrArg(a.Get(0, "old"), "replace"), StrArg(a.Get(1, "new"), "replace"),
                              IntArg(a.Get(2, "count"), -1, "replace"));
    in.ChargeBytes(r.size());
    return Value::String(std::move(r));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    const std::string& sub = StrArg(a0, name.c_str());
    size_t at = (name == "find" || name == "index") ? s.find(sub) : s.rfind(sub);
    if (at == std::string::npos) {
      if (name == "index" || name == "rindex") Fail("substring not found");
      return Value::Int(-1);
    }
    return Value::Int(CodePointLength(s.substr(0, at)));
  }
  if (name == "count") {
    const std::string& sub = StrArg(a0, "count");
    if (sub.empty()) return Value::Int(CodePointLength(s) + 1);
    int64_t n = 0;
    for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value::Int(n);
  }
  if (name == "splitlines") return SplitLines(s);
  if (name == "join") {
    if (!a0) Fail("join() takes exactly one argument");
    return JoinWith(in, s, *a0);
  }
  if (std::optional<Value> r = StringTest(s, name)) return *r;
  if (name == "format") {
    std::string r = PyFormat(s, a);
    in.ChargeBytes(r.size());
    return Value::String(std::move(r));
  }
  Fail("'str' object has no attribute '" + name + "'");
}

Value DictMethod(const Value& d, const std::string& name, CallArgs& a) {
  if (name == "items") {
    ValueList items;
    for (const auto& [k, v] : d.dict().items) items.push_back(Value::Tuple({Value::String(k), v}));
    return Value::List(std::move(items));
  }
  if (name == "keys") {
    ValueList keys;
    for (const auto& kv : d.dict().items) keys.push_back(Value::String(kv.first));
    return Value::List(std::move(keys));
  }
  if (name == "values") {
    ValueList vals;
    for (const auto& kv : d.dict().items) vals.push_back(kv.second);
    return Value::List(std::move(vals));
  }
  // get(key, default=None)
  const Value* key = a.Get(0, "key");
  if (!key) Fail("get expected at least 1 argument");
  const Value* v = key->is_string() ? d.dict().Find(key->as_string()) : nullptr;
  if (v) return *v;
  const Value* dflt = a.Get(1, "default");
  return dflt ? *dflt : Value::None();
}

Value ListMethod(const Value& l, const std::string& name, CallArgs& a) {
  const Value* x = a.Get(0, "");
  if (!x) Fail(name + "() takes exactly one argument");
  int64_t count = 0;
  for (size_t i = 0; i < l.list().size(); ++i) {
    if (Equals(l.list()[i], *x)) {
      if (name == "index") return Value::Int(static_cast<int64_t>(i));
      ++count;
    }
  }
  if (name == "index") Fail(Repr(*x) + " is not in list");
  return Value::Int(count);
}

}  // namespace

std::string PyStrip(const std::string& s, const Value& chars, bool left, bool right) {
  std::u32string u = DecodeUtf8(s);
  std::u32string set;
  bool ws = chars.is_none() || chars.is_undefined();
  if (!ws) {
    if (!chars.is_string()) Fail("strip arg must be None or str");
    set = DecodeUtf8(chars.as_string());
  }
  auto strip_char = [&](char32_t c) { return ws ? IsPySpace(c) : set.find(c) != std::u32string::npos; };
  size_t b = 0, e = u.size();
  if (left) {
    while (b < e && strip_char(u[b])) ++b;
  }
  if (right) {
    while (e > b && strip_char(u[e - 1])) --e;
  }
  return EncodeUtf8(std::u32string_view(u).substr(b, e - b));
}

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (IsAsciiUpper(c)) c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string AsciiUpper(std::string s) {
  for (char& c : s) {
    if (IsAsciiLower(c)) c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

std::string PyReplace(const std::string& s, const std::string& old, const std::string& repl, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts repl between every character
    std::u32string u = DecodeUtf8(s);
    int64_t n = 0;
    for (size_t i = 0; i <= u.size(); ++i) {
      if (count < 0 || n < count) {
        out += repl;
        ++n;
      }
      if (i < u.size()) AppendUtf8(out, u[i]);
    }
    return out;
  }
  size_t start = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    size_t at = s.find(old, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += repl;
    start = at + old.size();
    ++n;
  }
  out.append(s, start, std::string::npos);
  return out;
}

int64_t CodePointLength(const std::string& s) { return static_cast<int64_t>(DecodeUtf8(s).size()); }

Value GetMethod(Interpreter& in, const Value& obj, const std::string& name) {
  static const std::unordered_set<std::string> kStr = {
      "startswith", "endswith",   "strip",   "lstrip",  "rstrip",  "split",   "rsplit",  "upper", "lower",
      "title",      "capitalize", "replace", "find",    "rfind",   "index",   "rindex",  "count", "splitlines",
      "join",       "isdigit",    "isalpha", "isalnum", "isspace", "islower", "isupper", "format"};
  static const std::unordered_set<std::string> kDict = {"items", "keys", "values", "get"};
  Interpreter* ip = &in;
  if (obj.is_string() && kStr.count(name)) {
    std::string s = obj.as_string();
    return Value::Function("str." + name, [ip, s, name](CallArgs& a) { return StringMethod(*ip, s, name, a); });
  }
  if (obj.is_dict() && kDict.count(name)) {
    return Value::Function("dict." + name, [obj, name](CallArgs& a) { return DictMethod(obj, name, a); });
  }
  if (obj.is_list() && (name == "index" || name == "count")) {
    return Value::Function("list." + name, [obj, name](CallArgs& a) { return ListMethod(obj, name, a); });
  }
  return Value();
}

}  // namespace pg::jinja
