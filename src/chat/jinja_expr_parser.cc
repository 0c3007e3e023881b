// Expression parsing of jinja::Parser (jinja_parser_impl.h): Jinja2's
// precedence, postfix subscripts and calls, filters and tests.
#include "chat/jinja_builtins.h"
#include "chat/jinja_parser_impl.h"

namespace pg::jinja {

ExprPtr Parser::ParseTupleExpr(bool with_cond) {
  ExprPtr first = with_cond ? ParseExpr() : ParseOr();
  if (!IsOp(",")) return first;
  auto t = Make(Expr::Kind::kTuple);
  t->args.push_back(std::move(first));
  while (SkipOp(",")) {
    if (Cur().type == TokenType::kVarEnd || Cur().type == TokenType::kBlockEnd || IsName("if")) break;
    t->args.push_back(with_cond ? ParseExpr() : ParseOr());
  }
  return t;
}

ExprPtr Parser::ParseExpr() {
  DepthGuard guard(this);
  ExprPtr e = ParseOr();
  while (SkipName("if")) {
    auto c = Make(Expr::Kind::kCondExpr);
    c->args.push_back(ParseOr());
    c->args.push_back(std::move(e));
    c->args.push_back(SkipName("else") ? ParseExpr() : nullptr);
    e = std::move(c);
  }
  return e;
}

ExprPtr Parser::Binary(const std::string& op, ExprPtr l, ExprPtr r) {
  auto b = Make(Expr::Kind::kBinary);
  b->name = op;
  b->args.push_back(std::move(l));
  b->args.push_back(std::move(r));
  return b;
}

ExprPtr Parser::ParseBinaryChain(FunctionRef<ExprPtr()> operand, std::initializer_list<const char*> ops, bool names) {
  ExprPtr e = operand();
  while (true) {
    const char* op = nullptr;
    for (const char* o : ops) {
      if (names ? IsName(o) : IsOp(o)) op = o;
    }
    if (!op) return e;
    Next();
    e = Binary(op, std::move(e), operand());
  }
}

void Parser::ParseItems(const char* close, FunctionRef<void()> item) {
  while (!IsOp(close)) {
    item();
    if (!SkipOp(",")) break;
  }
  ExpectOp(close);
}

ExprPtr Parser::ParseOr() {
  return ParseBinaryChain([this] { return ParseAnd(); }, {"or"}, true);
}

ExprPtr Parser::ParseAnd() {
  return ParseBinaryChain([this] { return ParseNot(); }, {"and"}, true);
}

ExprPtr Parser::ParseNot() {
  DepthGuard guard(this);
  if (SkipName("not")) {
    auto u = Make(Expr::Kind::kUnary);
    u->name = "not";
    u->args.push_back(ParseNot());
    return u;
  }
  return ParseCompare();
}

ExprPtr Parser::ParseCompare() {
  ExprPtr e = ParseMath1();
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (Cur().type == TokenType::kOp && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                         Cur().text == ">" || Cur().text == "<=" || Cur().text == ">=")) {
      op = Cur().text;
      Next();
    } else if (IsName("in")) {
      op = "in";
      Next();
    } else if (IsName("not") && Peek().type == TokenType::kName && Peek().text == "in") {
      op = "notin";
      Next();
      Next();
    } else {
      break;
    }
    if (!cmp) {
      cmp = Make(Expr::Kind::kCompare);
      cmp->args.push_back(std::move(e));
    }
    cmp->ops.push_back(op);
    cmp->args.push_back(ParseMath1());
  }
  return cmp ? std::move(cmp) : std::move(e);
}

ExprPtr Parser::ParseMath1() {
  return ParseBinaryChain([this] { return ParseConcat(); }, {"+", "-"}, false);
}

ExprPtr Parser::ParseConcat() {
  return ParseBinaryChain([this] { return ParseMath2(); }, {"~"}, false);
}

ExprPtr Parser::ParseMath2() {
  return ParseBinaryChain([this] { return ParsePow(); }, {"*", "/", "//", "%"}, false);
}

ExprPtr Parser::ParsePow() {
  return ParseBinaryChain([this] { return ParseUnary(true); }, {"**"}, false);
}

ExprPtr Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  ExprPtr e;
  if (IsOp("-") || IsOp("+")) {
    auto u = Make(Expr::Kind::kUnary);
    u->name = Cur().text;
    Next();
    u->args.push_back(ParseUnary(false));
    e = std::move(u);
  } else {
    e = ParsePostfix(ParsePrimary());
  }
  if (with_filter) e = ParseFilterExpr(std::move(e));
  return e;
}

ExprPtr Parser::ParsePrimary() {
  DepthGuard guard(this);
  const Token& t = Cur();
  if (t.type == TokenType::kName) {
    auto e = Make(Expr::Kind::kLiteral);
    const std::string& n = t.text;
    if (n == "true" || n == "True") {
      e->literal = Value::Bool(true);
    } else if (n == "false" || n == "False") {
      e->literal = Value::Bool(false);
    } else if (n == "none" || n == "None") {
      e->literal = Value::None();
    } else {
      e->kind = Expr::Kind::kName;
      e->name = n;
    }
    Next();
    return e;
  }
  if (t.type == TokenType::kString) {
    std::string s;
    while (Cur().type == TokenType::kString) {  // adjacent literals concatenate
      s += Cur().text;
      Next();
    }
    auto e = Make(Expr::Kind::kLiteral);
    e->literal = Value::String(std::move(s));
    return e;
  }
  if (t.type == TokenType::kInt || t.type == TokenType::kFloat) {
    auto e = Make(Expr::Kind::kLiteral);
    e->literal = t.type == TokenType::kInt ? Value::Int(t.int_value) : Value::Float(t.float_value);
    Next();
    return e;
  }
  if (SkipOp("(")) {
    if (SkipOp(")")) return Make(Expr::Kind::kTuple);
    ExprPtr first = ParseExpr();
    if (SkipOp(")")) return first;
    auto tup = Make(Expr::Kind::kTuple);
    tup->args.push_back(std::move(first));
    if (SkipOp(",")) {
      ParseItems(")", [&] { tup->args.push_back(ParseExpr()); });
    } else {
      ExpectOp(")");
    }
    return tup;
  }
  if (SkipOp("[")) {
    auto l = Make(Expr::Kind::kList);
    ParseItems("]", [&] { l->args.push_back(ParseExpr()); });
    return l;
  }
  if (SkipOp("{")) {
    auto d = Make(Expr::Kind::kDict);
    ParseItems("}", [&] {
      d->args.push_back(ParseExpr());
      ExpectOp(":");
      d->args.push_back(ParseExpr());
    });
    return d;
  }
  Error("unexpected " + Describe(t));
}

ExprPtr Parser::ParsePostfix(ExprPtr e) {
  while (true) {
    if (SkipOp(".")) {
      if (Cur().type == TokenType::kInt) {
        auto g = Make(Expr::Kind::kGetItem);
        auto idx = Make(Expr::Kind::kLiteral);
        idx->literal = Value::Int(Cur().int_value);
        Next();
        g->args.push_back(std::move(e));
        g->args.push_back(std::move(idx));
        e = std::move(g);
      } else {
        auto g = Make(Expr::Kind::kGetAttr);
        g->name = ExpectName();
        g->args.push_back(std::move(e));
        e = std::move(g);
      }
    } else if (SkipOp("[")) {
      e = ParseSubscript(std::move(e));
    } else if (IsOp("(")) {
      e = ParseCall(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::ParseSubscript(ExprPtr target) {
  ExprPtr start = IsOp(":") ? nullptr : ParseExpr();
  if (!IsOp(":")) {
    ExpectOp("]");
    auto g = Make(Expr::Kind::kGetItem);
    g->args.push_back(std::move(target));
    g->args.push_back(std::move(start));
    return g;
  }
  Next();
  auto s = Make(Expr::Kind::kSlice);
  s->args.push_back(std::move(target));
  s->args.push_back(std::move(start));
  s->args.push_back(IsOp(":") || IsOp("]") ? nullptr : ParseExpr());
  ExprPtr step;
  if (SkipOp(":") && !IsOp("]")) step = ParseExpr();
  s->args.push_back(std::move(step));
  ExpectOp("]");
  return s;
}

void Parser::ParseCallArgs(Expr* e) {
  ExpectOp("(");
  ParseItems(")", [&] {
    if (IsOp("*") || IsOp("**")) Error("*args / **kwargs in calls are not supported");
    if (Cur().type == TokenType::kName && Peek().type == TokenType::kOp && Peek().text == "=") {
      std::string kw = Cur().text;
      Next();
      Next();
      e->arg_names.push_back(kw);
      e->args.push_back(ParseExpr());
    } else {
      if (std::any_of(e->arg_names.begin(), e->arg_names.end(), [](const std::string& s) { return !s.empty(); })) {
        Error("positional argument follows keyword argument");
      }
      e->arg_names.emplace_back();
      e->args.push_back(ParseExpr());
    }
  });
}

ExprPtr Parser::ParseCall(ExprPtr callee) {
  auto c = Make(Expr::Kind::kCall);
  c->args.push_back(std::move(callee));
  c->arg_names.emplace_back();
  ParseCallArgs(c.get());
  return c;
}

ExprPtr Parser::ParseNamedCall(Expr::Kind kind, const char* what, bool (*known)(std::string_view), ExprPtr input) {
  auto e = Make(kind);
  e->name = ExpectName();
  if (!known(e->name)) {
    p_--;
    Error(std::string("no ") + what + " named '" + e->name + "'");
  }
  e->args.push_back(std::move(input));
  e->arg_names.emplace_back();
  return e;
}

ExprPtr Parser::ParseFilter(ExprPtr input) {
  if (input) ExpectOp("|");
  ExprPtr f = ParseNamedCall(Expr::Kind::kFilter, "filter", HasFilter, std::move(input));
  if (IsOp("(")) ParseCallArgs(f.get());
  return f;
}

ExprPtr Parser::ParseFilterExpr(ExprPtr e) {
  while (true) {
    if (IsOp("|")) {
      e = ParseFilter(std::move(e));
    } else if (IsName("is")) {
      Next();
      const bool negated = SkipName("not");
      ExprPtr t = ParseNamedCall(Expr::Kind::kTest, "test", HasTest, std::move(e));
      t->negated = negated;
      if (IsOp("(")) {
        ParseCallArgs(t.get());
      } else if ((Cur().type == TokenType::kName || Cur().type == TokenType::kString || Cur().type == TokenType::kInt ||
                  Cur().type == TokenType::kFloat || IsOp("[") || IsOp("{")) &&
                 !IsName("else") && !IsName("or") && !IsName("and")) {
        if (IsName("is")) Error("cannot chain multiple tests with 'is'");
        t->args.push_back(ParsePostfix(ParsePrimary()));
        t->arg_names.emplace_back();
      }
      e = std::move(t);
    } else if (IsOp("(")) {
      e = ParseCall(std::move(e));
    } else {
      return e;
    }
  }
}

}  // namespace pg::jinja
