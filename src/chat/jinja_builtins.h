// The builtins of the Jinja subset: filters (jinja_filters.cc), tests, the
// Python str/dict methods templates call, and the global functions
// namespace() and range() (jinja_methods.cc). Case changes are ASCII-only.
// Thread-safety: stateless functions; the name tables are immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_interpreter.h"
#include "chat/jinja_value.h"

namespace pg::jinja {

bool HasFilter(std::string_view name);
bool HasTest(std::string_view name);

// Throws jinja::Error on bad arguments.
Value ApplyFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);
bool ApplyTest(Interpreter& in, const std::string& name, const Value& v, CallArgs& args);

// `obj.name` as a bound Python method (str.startswith, dict.items, ...), or
// Undefined when `obj` has no such method.
Value GetMethod(Interpreter& in, const Value& obj, const std::string& name);

// Adds namespace() and range() to `globals` (a dict).
void AddBuiltinGlobals(Interpreter& in, Value& globals);

// Python string helpers shared by filters and methods.
std::string PyStrip(const std::string& s, const Value& chars, bool left, bool right);
std::string AsciiLower(std::string s);
std::string AsciiUpper(std::string s);
std::string PyReplace(const std::string& s, const std::string& old, const std::string& repl, int64_t count);
int64_t CodePointLength(const std::string& s);

}  // namespace pg::jinja
