// The operators of template expressions: unary +, - and not; arithmetic with
// Python's semantics (integer overflow is an error, floor division and modulo
// round toward negative infinity); comparisons and membership. Part of
// Interpreter (jinja_interpreter.h).
#include <cmath>

#include "chat/jinja_builtins.h"
#include "chat/jinja_interpreter.h"

namespace pg::jinja {
namespace {

[[noreturn]] void FailOperands(const char* op, const Value& a, const Value& b) {
  if (a.is_undefined()) FailUndefined(a);
  if (b.is_undefined()) FailUndefined(b);
  Fail(std::string("unsupported operand type(s) for ") + op + ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
}

int64_t AddInt(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) Fail("integer overflow");
  return r;
}
int64_t SubInt(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) Fail("integer overflow");
  return r;
}
int64_t MulInt(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) Fail("integer overflow");
  return r;
}

// "/", "//" and "%" with Python's semantics: floor division and a modulo
// with the divisor's sign.
Value Divide(const std::string& op, const Value& a, const Value& b) {
  const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
  if (!(a.is_number() && b.is_number())) FailOperands(op.c_str(), a, b);
  if (b.as_double() == 0.0) Fail(op == "%" ? "integer modulo by zero" : "division by zero");
  if (op == "/") return Value::Float(a.as_double() / b.as_double());
  if (ints) {
    int64_t x = a.as_int(), y = b.as_int();
    if (x == INT64_MIN && y == -1) Fail("integer overflow");
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      --q;
      m += y;
    }
    return Value::Int(op == "//" ? q : m);
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "//") return Value::Float(std::floor(x / y));
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value::Float(m);
}

// "**": exact for integer bases and non-negative integer exponents.
Value Power(const Value& a, const Value& b) {
  const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
  if (!(a.is_number() && b.is_number())) FailOperands("**", a, b);
  if (ints && b.as_int() >= 0) {
    int64_t base = a.as_int(), exp = b.as_int(), result = 1;
    if (base == 0 || base == 1) return Value::Int(exp == 0 ? 1 : base);
    if (base == -1) return Value::Int(exp % 2 ? -1 : 1);
    for (int64_t i = 0; i < exp; ++i) {  // |base| >= 2: overflows within 63 rounds
      result = MulInt(result, base);
    }
    return Value::Int(result);
  }
  return Value::Float(std::pow(a.as_double(), b.as_double()));
}

}  // namespace

Value Interpreter::EvalUnary(const Expr& e) {
  Value v = Eval(*e.args[0]);
  if (e.name == "not") return Value::Bool(!v.Truthy());
  if (v.is_undefined()) FailUndefined(v);
  if (!v.is_number()) Fail(std::string("bad operand type for unary ") + e.name + ": '" + v.TypeName() + "'");
  if (e.name == "+") return v.is_bool() ? Value::Int(v.as_int()) : v;
  if (v.is_float()) return Value::Float(-v.as_double());
  return Value::Int(SubInt(0, v.as_int()));
}

Value Interpreter::EvalCompare(const Expr& e) {
  Value left = Eval(*e.args[0]);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = Eval(*e.args[i + 1]);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==") {
      r = Equals(left, right);
    } else if (op == "!=") {
      r = !Equals(left, right);
    } else if (op == "<") {
      r = Less(left, right);
    } else if (op == ">") {
      r = Less(right, left);
    } else if (op == "<=") {
      r = !Less(right, left);
    } else if (op == ">=") {
      r = !Less(left, right);
    } else if (op == "in") {
      r = Contains(right, left);
    } else {
      r = !Contains(right, left);
    }
    if (!r) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

Value Interpreter::EvalBinary(const Expr& e) {
  const std::string& op = e.name;
  Value a = Eval(*e.args[0]);
  if (op == "and") return a.Truthy() ? Eval(*e.args[1]) : a;
  if (op == "or") return a.Truthy() ? a : Eval(*e.args[1]);
  Value b = Eval(*e.args[1]);
  if (op == "~") {
    std::string s = Str(a);
    std::string t = Str(b);
    ChargeBytes(s.size() + t.size());
    return Value::String(s + t);
  }
  if (op == "+") return Plus(a, b);
  if (op == "-") {
    if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) return Value::Int(SubInt(a.as_int(), b.as_int()));
    if (a.is_number() && b.is_number()) return Value::Float(a.as_double() - b.as_double());
    FailOperands("-", a, b);
  }
  if (op == "*") return Times(a, b);
  if (op == "/" || op == "//" || op == "%") return Divide(op, a, b);
  if (op == "**") return Power(a, b);
  Fail("unknown operator " + op);
}

Value Interpreter::Plus(const Value& a, const Value& b) {
  if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) return Value::Int(AddInt(a.as_int(), b.as_int()));
  if (a.is_number() && b.is_number()) return Value::Float(a.as_double() + b.as_double());
  if (a.is_string() && b.is_string()) {
    ChargeBytes(a.as_string().size() + b.as_string().size());
    return Value::String(a.as_string() + b.as_string());
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    CheckListSize(a.list().size() + b.list().size());
    Step(static_cast<int64_t>(a.list().size() + b.list().size()));
    ValueList items = a.list();
    items.insert(items.end(), b.list().begin(), b.list().end());
    return a.is_tuple() ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
  }
  FailOperands("+", a, b);
}

Value Interpreter::Times(const Value& a, const Value& b) {
  if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) return Value::Int(MulInt(a.as_int(), b.as_int()));
  if (a.is_number() && b.is_number()) return Value::Float(a.as_double() * b.as_double());
  const Value& seq = (b.is_int() || b.is_bool()) ? a : b;
  const Value& count = (b.is_int() || b.is_bool()) ? b : a;
  if ((count.is_int() || count.is_bool()) && (seq.is_string() || seq.is_list())) {
    int64_t n = std::max<int64_t>(0, count.as_int());
    if (seq.is_string()) {
      if (n > 0 && seq.as_string().size() > limits_.max_output_bytes / static_cast<uint64_t>(n)) {
        Fail("template string exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
      }
      ChargeBytes(seq.as_string().size() * static_cast<size_t>(n));
      std::string s;
      for (int64_t i = 0; i < n; ++i) s += seq.as_string();
      return Value::String(std::move(s));
    }
    if (n > 0 && seq.list().size() > limits_.max_list_items / static_cast<uint64_t>(n)) CheckListSize(SIZE_MAX);
    ValueList items;
    for (int64_t i = 0; i < n; ++i) items.insert(items.end(), seq.list().begin(), seq.list().end());
    Step(static_cast<int64_t>(items.size()));
    return seq.is_tuple() ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
  }
  FailOperands("*", a, b);
}

}  // namespace pg::jinja
