// jinja::Value: the dynamic value of the Jinja-subset interpreter. It models
// the Python objects chat templates see: None, bool, int, float, str, list,
// tuple, dict (insertion ordered), Jinja's namespace, callables and Jinja's
// default Undefined. Lists and dicts are shared by reference, as in Python.
// Also: Python-compatible str()/repr(), truthiness, comparison, and the
// json.dumps serializer behind the `tojson` filter.
//
// Errors inside the interpreter are thrown as jinja::Error and caught at the
// ChatTemplate boundary, where they become a Status; no exception leaves the
// module.
// Thread-safety: values are not synchronized; one render owns its values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pg::jinja {

// The one internal error type (template raised, type error, limit hit...).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by the template's own raise_exception(msg).
struct RaisedError : Error {
  using Error::Error;
};
[[noreturn]] void Fail(const std::string& message);

class Value;
// Fails with an undefined value's message (what it was looked up as).
[[noreturn]] void FailUndefined(const Value& u);
using ValueList = std::vector<Value>;

// Insertion-ordered string-keyed mapping. Lookup is linear: template dicts
// are small (messages, tool schemas).
struct ValueDict {
  std::vector<std::pair<std::string, Value>> items;

  const Value* Find(std::string_view key) const;
  void Set(const std::string& key, Value v);
};

// Positional and keyword arguments of one call.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Argument `index` by position, else by keyword `name`, else nullptr.
  const Value* Get(size_t index, std::string_view name) const;
};

using NativeFn = std::function<Value(CallArgs&)>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() = default;  // Undefined with no name.
  static Value Undefined(std::string name = {});
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double f);
  static Value String(std::string s);
  static Value List(ValueList items = {});
  static Value Tuple(ValueList items);
  static Value Dict();
  static Value Namespace();
  static Value Function(std::string name, NativeFn fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kList && tuple_; }
  bool is_dict() const { return kind_ == Kind::kDict && !namespace_; }
  bool is_namespace() const { return kind_ == Kind::kDict && namespace_; }
  bool is_callable() const { return kind_ == Kind::kCallable; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double as_double() const;                            // any number
  const std::string& as_string() const { return s_; }  // also the name of an Undefined
  ValueList& list() const { return *list_; }
  ValueDict& dict() const { return *dict_; }
  const NativeFn& fn() const { return *fn_; }
  const std::string& fn_name() const { return s_; }

  // Python-style type name for error messages ("str", "dict", ...).
  const char* TypeName() const;
  bool Truthy() const;

 private:
  // A value of `kind` holding x in `field` (the factories above).
  template <class T>
  static Value Of(Kind kind, T Value::*field, T x);

  Kind kind_ = Kind::kUndefined;
  bool tuple_ = false;
  bool namespace_ = false;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<NativeFn> fn_;
};

// Recursion bound for printing/serializing/comparing nested values (a
// namespace may contain itself).
inline constexpr int kMaxValueDepth = 256;

// Python str(v) (Undefined prints as "").
std::string Str(const Value& v);
// Python repr(v).
std::string Repr(const Value& v);
// Python repr() of a float: shortest round-trip digits, "1.0", "1e+20".
std::string PyFloatRepr(double d);

// Python ==.
bool Equals(const Value& a, const Value& b);
// Python <, for numbers, strings and lists; throws on other types.
bool Less(const Value& a, const Value& b);

struct JsonOptions {
  std::string indent;  // per level; used only when `pretty`
  bool pretty = false;
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// Python json.dumps(v, ...) with Hugging Face's tojson defaults.
std::string ToJson(const Value& v, const JsonOptions& opt);

Value FromJson(const nlohmann::ordered_json& j);

// UTF-8 helpers. Invalid bytes decode to themselves as code points
// U+DC80..U+DCFF (Python's surrogateescape), so decode/encode round-trips.
std::u32string DecodeUtf8(std::string_view s);
std::string EncodeUtf8(std::u32string_view s);
void AppendUtf8(std::string& out, char32_t c);

}  // namespace pg::jinja
