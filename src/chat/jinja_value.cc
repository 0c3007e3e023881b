#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/utf8.h"

namespace pg::jinja {

void Fail(const std::string& message) { throw Error(message); }

void FailUndefined(const Value& u) { Fail(u.as_string().empty() ? std::string("value is undefined") : u.as_string()); }

const Value* ValueDict::Find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void ValueDict::Set(const std::string& key, Value v) {
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(key, std::move(v));
}

const Value* CallArgs::Get(size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

template <class T>
Value Value::Of(Kind kind, T Value::*field, T x) {
  Value v;
  v.kind_ = kind;
  v.*field = std::move(x);
  return v;
}

Value Value::Undefined(std::string name) { return Of(Kind::kUndefined, &Value::s_, std::move(name)); }
Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}
Value Value::Bool(bool b) { return Of(Kind::kBool, &Value::b_, b); }
Value Value::Int(int64_t i) { return Of(Kind::kInt, &Value::i_, i); }
Value Value::Float(double f) { return Of(Kind::kFloat, &Value::f_, f); }
Value Value::String(std::string s) { return Of(Kind::kString, &Value::s_, std::move(s)); }
Value Value::List(ValueList items) {
  return Of(Kind::kList, &Value::list_, std::make_shared<ValueList>(std::move(items)));
}
Value Value::Tuple(ValueList items) {
  Value v = List(std::move(items));
  v.tuple_ = true;
  return v;
}
Value Value::Dict() { return Of(Kind::kDict, &Value::dict_, std::make_shared<ValueDict>()); }
Value Value::Namespace() {
  Value v = Dict();
  v.namespace_ = true;
  return v;
}
Value Value::Function(std::string name, NativeFn fn) {
  Value v = Of(Kind::kCallable, &Value::fn_, std::make_shared<NativeFn>(std::move(fn)));
  v.s_ = std::move(name);
  return v;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::kFloat: return f_;
    case Kind::kInt: return static_cast<double>(i_);
    case Kind::kBool: return b_ ? 1.0 : 0.0;
    default: return 0.0;
  }
}

const char* Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return tuple_ ? "tuple" : "list";
    case Kind::kDict: return namespace_ ? "Namespace" : "dict";
    case Kind::kCallable: return "function";
  }
  return "?";
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return b_;
    case Kind::kInt: return i_ != 0;
    case Kind::kFloat: return f_ != 0.0;
    case Kind::kString: return !s_.empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return namespace_ || !dict_->items.empty();
    case Kind::kCallable: return true;
  }
  return false;
}

// ---------------------------------------------------------------- UTF-8

void AppendUtf8(std::string& out, char32_t c) {
  if (c >= 0xDC80 && c <= 0xDCFF) {  // surrogateescape: an undecodable byte
    out.push_back(static_cast<char>(c - 0xDC00));
  } else if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8Char(s, i, &cp);
    if (len == 0) {  // a byte that is not part of a well-formed character
      out.push_back(0xDC00 + static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string EncodeUtf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) AppendUtf8(out, c);
  return out;
}

// ---------------------------------------------------------------- printing

std::string PyFloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+02"
  bool neg = sci[0] == '-';
  size_t epos = sci.find('e');
  std::string mant = sci.substr(neg ? 1 : 0, epos - (neg ? 1 : 0));
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(-exp - 1, '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp + 1) {
      out += digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out + ebuf;
}

namespace {

void ReprString(std::string& out, const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  out.push_back(q);
  for (char32_t c : DecodeUtf8(s)) {
    if (c == static_cast<char32_t>(q) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || (c >= 0x7F && c < 0xA0) || (c >= 0xDC80 && c <= 0xDCFF)) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c >= 0xDC80 ? c - 0xDC00 : c));
      out += buf;
    } else {
      AppendUtf8(out, c);
    }
  }
  out.push_back(q);
}

void Print(std::string& out, const Value& v, bool repr, int depth) {
  if (depth > kMaxValueDepth) Fail("value nested too deeply to print");
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (repr) out += "Undefined";
      return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: out += PyFloatRepr(v.as_double()); return;
    case Value::Kind::kString:
      if (repr) {
        ReprString(out, v.as_string());
      } else {
        out += v.as_string();
      }
      return;
    case Value::Kind::kList: {
      out.push_back(v.is_tuple() ? '(' : '[');
      const ValueList& l = v.list();
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += ", ";
        Print(out, l[i], true, depth + 1);
      }
      if (v.is_tuple() && l.size() == 1) out.push_back(',');
      out.push_back(v.is_tuple() ? ')' : ']');
      return;
    }
    case Value::Kind::kDict: {
      if (v.is_namespace()) out += "<Namespace ";
      out.push_back('{');
      bool first = true;
      for (const auto& [k, val] : v.dict().items) {
        if (!first) out += ", ";
        first = false;
        ReprString(out, k);
        out += ": ";
        Print(out, val, true, depth + 1);
      }
      out.push_back('}');
      if (v.is_namespace()) out.push_back('>');
      return;
    }
    case Value::Kind::kCallable: out += "<function " + v.fn_name() + ">"; return;
  }
}

}  // namespace

std::string Str(const Value& v) {
  if (v.is_string()) return v.as_string();
  std::string out;
  Print(out, v, false, 0);
  return out;
}

std::string Repr(const Value& v) {
  std::string out;
  Print(out, v, true, 0);
  return out;
}

// ---------------------------------------------------------------- comparison

namespace {

bool EqualsAt(const Value& a, const Value& b, int depth) {
  if (depth > kMaxValueDepth) Fail("value nested too deeply to compare");
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const ValueList& x = a.list();
      const ValueList& y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!EqualsAt(x[i], y[i], depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      if (a.is_namespace() || b.is_namespace()) return &a.dict() == &b.dict();
      const ValueDict& x = a.dict();
      const ValueDict& y = b.dict();
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.Find(k);
        if (!other || !EqualsAt(v, *other, depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable: return &a.fn() == &b.fn();
    default: return false;
  }
}

}  // namespace

bool Equals(const Value& a, const Value& b) { return EqualsAt(a, b, 0); }

bool Less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // byte order == code point order
  if (a.is_list() && b.is_list()) {
    const ValueList& x = a.list();
    const ValueList& y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!Equals(x[i], y[i])) return Less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  Fail(std::string("'<' not supported between instances of '") + a.TypeName() + "' and '" + b.TypeName() + "'");
}

}  // namespace pg::jinja
