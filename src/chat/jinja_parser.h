// jinja::Parse: template source -> Program (syntax tree).
// Statements: if/elif/else, for (tuple targets, `if` filter, else, loop
// controls), set (plain, tuple, namespace attribute, block), macro, filter
// blocks and HF's generation block. Expressions follow Jinja2's grammar and
// precedence (conditional < or < and < not < comparison < + - < ~ < * / // %
// < ** < unary < postfix/filter/test). Unknown filters and tests are errors
// here, as in Jinja2's compile step.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "chat/jinja_ast.h"

namespace pg::jinja {

// Nesting bound for statements and expressions (keeps the recursive-descent
// parser and the evaluator off the end of the stack).
inline constexpr int kMaxParseDepth = 200;

// Throws jinja::Error ("line N: ...") on a syntax error.
Program Parse(const std::string& source);

}  // namespace pg::jinja
