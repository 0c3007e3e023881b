// jinja::Interpreter: renders a parsed Program against a set of globals,
// with Jinja2 semantics as Hugging Face configures them (sandboxed,
// immutable data, default Undefined, trim/lstrip handled by the lexer).
//
// Scoping follows Jinja2: `for` bodies and macro calls get a fresh scope per
// iteration/call (assignments do not leak out), `if` does not create one,
// top-level `set` shadows the globals. Namespaces are the only mutable
// objects.
//
// Bounded execution: every statement, expression and loop iteration costs a
// step, and building strings costs one step per kBytesPerStep bytes; the
// output, every string value, list sizes and macro call depth are capped.
// Hitting a limit throws jinja::Error like any other template error.
// Thread-safety: one Interpreter renders once, on one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_value.h"

namespace pg::jinja {

struct RenderLimits {
  size_t max_output_bytes = 32u << 20;  // also the cap on any one string value
  int64_t max_steps = 5'000'000;
  int max_call_depth = 32;           // nested macro / filter-callback calls
  size_t max_list_items = 1u << 20;  // cap on list/range/repeat sizes
};

inline constexpr size_t kBytesPerStep = 32;

class Interpreter {
 public:
  explicit Interpreter(const RenderLimits& limits) : limits_(limits) {}
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders `program` with `globals` (a dict) as the outermost scope.
  std::string Render(const Program& program, const Value& globals);

  // Helpers for the builtins.
  void Step(int64_t n = 1);
  void ChargeBytes(size_t bytes);  // also enforces the string size cap
  void CheckListSize(size_t n) const;
  Value Call(const Value& fn, CallArgs& args);
  Value GetAttr(const Value& obj, const std::string& name);
  Value GetItem(const Value& obj, const Value& key);
  const RenderLimits& limits() const { return limits_; }
  // Remembers a namespace so its cycles can be broken when rendering ends.
  void TrackNamespace(const Value& ns) { namespaces_.push_back(ns); }

 private:
  struct Scope;
  enum class Flow { kNormal, kBreak, kContinue };

  Flow Exec(const Body& body, std::string& out);
  Flow ExecNode(const Node& n, std::string& out);
  void ExecFor(const Node& n, std::string& out);
  void ExecSet(const Node& n, std::string& out);
  void DefineMacro(const Node& n);
  Value CallMacro(const Node& n, const std::weak_ptr<Scope>& closure, CallArgs& args);
  std::string Capture(const Body& body);
  // `filter` (a chain: each filter's args[0] the one before it) applied to
  // v, the innermost filter first.
  Value ApplyFilterChain(const Expr* filter, Value v);

  Value Eval(const Expr& e);
  Value EvalUnary(const Expr& e);               // jinja_operators.cc
  Value EvalBinary(const Expr& e);              // jinja_operators.cc
  Value EvalCompare(const Expr& e);             // jinja_operators.cc
  Value Plus(const Value& a, const Value& b);   // jinja_operators.cc: numbers, strings, lists
  Value Times(const Value& a, const Value& b);  // jinja_operators.cc: numbers, repetition
  Value EvalSlice(const Expr& e);
  void EvalArgs(const Expr& e, size_t first, CallArgs& args);
  Value Lookup(const std::string& name) const;
  void Assign(const std::string& name, Value v);
  void Append(std::string& out, const std::string& s);

  RenderLimits limits_;
  int64_t steps_ = 0;
  int call_depth_ = 0;
  std::shared_ptr<Scope> scope_;
  std::vector<Value> namespaces_;
};

// Python `x in container`.
bool Contains(const Value& container, const Value& item);
// Items a `for` loop visits: list/tuple items, dict keys, string characters;
// nothing for Undefined. Throws for non-iterables.
ValueList Iterate(const Value& v);

}  // namespace pg::jinja
