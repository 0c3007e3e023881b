// The syntax tree of a parsed Jinja template: expressions (Expr) and
// statements (Node). Built by jinja::Parse, walked by jinja::Interpreter.
// Immutable after parsing; safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chat/jinja_value.h"

namespace pg::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,   // literal
    kName,      // name
    kList,      // args: items
    kTuple,     // args: items
    kDict,      // args: key0, value0, key1, value1, ...
    kGetAttr,   // args[0].name
    kGetItem,   // args[0][args[1]]
    kSlice,     // args[0][args[1]:args[2]:args[3]]; absent parts are null
    kCall,      // args[0](args[1..]); arg_names parallel to args, "" = positional
    kFilter,    // args[0] | name(args[1..]); args[0] null inside {% filter %}
    kTest,      // args[0] is [not] name(args[1..]); negated
    kUnary,     // op args[0]: "not", "-", "+"
    kBinary,    // args[0] op args[1]: + - * / // % ** ~ and or
    kCompare,   // args[0] ops[0] args[1] ops[1] args[2] ...: == != < > <= >= in notin
    kCondExpr,  // args[1] if args[0] else args[2] (args[2] may be null)
  };
  Kind kind = Kind::kLiteral;
  int line = 0;
  Value literal;
  std::string name;              // variable, attribute, filter, test or operator
  std::vector<std::string> ops;  // kCompare operators
  std::vector<ExprPtr> args;
  std::vector<std::string> arg_names;  // keyword names, parallel to args (kCall/kFilter/kTest)
  bool negated = false;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    kText,    // text
    kOutput,  // {{ expr }}
    kIf,      // conditions[i] -> bodies[i]; bodies.back() is the else body when
              // bodies.size() > conditions.size()
    kFor,     // for targets in expr [if filter]: bodies[0]; else bodies[1]
    kSet,     // set targets = expr, or set targets.attr = expr (attr non-empty),
              // or block set (expr null): bodies[0], with optional filter
    kMacro,   // macro name(params = defaults): bodies[0]
    kBreak,
    kContinue,
    kFilterBlock,  // filter: bodies[0] piped through filter (an Expr kFilter chain)
  };
  Kind kind = Kind::kText;
  int line = 0;
  std::string text;                  // kText
  std::string name;                  // kMacro name
  std::string attr;                  // kSet: namespace attribute
  std::vector<std::string> targets;  // kFor / kSet names; kMacro parameters
  std::vector<ExprPtr> defaults;     // kMacro: parameter defaults (null = none)
  ExprPtr expr;                      // kOutput, kFor iterable, kSet value
  ExprPtr filter;                    // kFor loop condition; kSet / kFilterBlock filter
  std::vector<ExprPtr> conditions;   // kIf
  std::vector<Body> bodies;
};

struct Program {
  Body body;
};

}  // namespace pg::jinja
