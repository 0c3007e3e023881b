#include "chat/jinja_parser.h"

#include <algorithm>

#include "chat/jinja_builtins.h"
#include "chat/jinja_lexer.h"

namespace pg::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Program Run() {
    Program prog;
    std::string which;
    prog.body = ParseBody({}, &which);
    return prog;
  }

 private:
  // ---------------------------------------------------------------- tokens
  const Token& Cur() const { return toks_[p_]; }
  const Token& Peek(size_t n = 1) const { return toks_[std::min(p_ + n, toks_.size() - 1)]; }
  void Next() {
    if (p_ + 1 < toks_.size()) ++p_;
  }
  bool IsOp(const char* op) const { return Cur().type == TokenType::kOp && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().type == TokenType::kName && Cur().text == n; }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool SkipName(const char* n) {
    if (!IsName(n)) return false;
    Next();
    return true;
  }

  [[noreturn]] void Error(const std::string& msg) const { Fail("line " + std::to_string(Cur().line) + ": " + msg); }

  static std::string Describe(const Token& t) {
    switch (t.type) {
      case TokenType::kText: return "text";
      case TokenType::kVarBegin: return "'{{'";
      case TokenType::kVarEnd: return "'}}'";
      case TokenType::kBlockBegin: return "'{%'";
      case TokenType::kBlockEnd: return "'%}'";
      case TokenType::kEof: return "end of template";
      case TokenType::kString: return "string literal";
      default: return "'" + t.text + "'";
    }
  }

  void ExpectOp(const char* op) {
    if (!SkipOp(op)) Error(std::string("expected '") + op + "', got " + Describe(Cur()));
  }
  std::string ExpectName() {
    if (Cur().type != TokenType::kName) Error("expected a name, got " + Describe(Cur()));
    std::string n = Cur().text;
    Next();
    return n;
  }
  void ExpectBlockEnd() {
    if (Cur().type != TokenType::kBlockEnd) Error("expected '%}', got " + Describe(Cur()));
    Next();
  }

  // Guards recursion in both statement and expression parsing.
  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p(p) {
      if (++p->depth_ > kMaxParseDepth) p->Error("template nested too deeply");
    }
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  ExprPtr Make(Expr::Kind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = Cur().line;
    return e;
  }
  NodePtr MakeNode(Node::Kind kind) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->line = Cur().line;
    return n;
  }

  // ---------------------------------------------------------------- statements

  // Parses until a block tag whose keyword is in `ends` (consumed, stored in
  // *which; the rest of that tag is left to the caller) or the end of input.
  Body ParseBody(const std::vector<std::string>& ends, std::string* which) {
    DepthGuard guard(this);
    Body body;
    while (true) {
      const Token& t = Cur();
      if (t.type == TokenType::kEof) {
        if (!ends.empty()) Error("unexpected end of template, expected '" + ends.back() + "'");
        return body;
      }
      if (t.type == TokenType::kText) {
        auto n = MakeNode(Node::Kind::kText);
        n->text = t.text;
        body.push_back(std::move(n));
        Next();
      } else if (t.type == TokenType::kVarBegin) {
        Next();
        auto n = MakeNode(Node::Kind::kOutput);
        n->expr = ParseTupleExpr();
        if (Cur().type != TokenType::kVarEnd) Error("expected '}}', got " + Describe(Cur()));
        Next();
        body.push_back(std::move(n));
      } else if (t.type == TokenType::kBlockBegin) {
        Next();
        if (Cur().type != TokenType::kName) Error("expected a statement keyword, got " + Describe(Cur()));
        const std::string kw = Cur().text;
        if (std::find(ends.begin(), ends.end(), kw) != ends.end()) {
          Next();
          *which = kw;
          return body;
        }
        ParseStatement(body);
      } else {
        Error("unexpected " + Describe(t));
      }
    }
  }

  void ParseStatement(Body& body) {
    const std::string kw = Cur().text;
    Next();
    if (kw == "if") {
      body.push_back(ParseIf());
    } else if (kw == "for") {
      body.push_back(ParseFor());
    } else if (kw == "set") {
      body.push_back(ParseSet());
    } else if (kw == "macro") {
      body.push_back(ParseMacro());
    } else if (kw == "break" || kw == "continue") {
      if (loop_depth_ == 0) Error("'" + kw + "' outside of a loop");
      body.push_back(MakeNode(kw == "break" ? Node::Kind::kBreak : Node::Kind::kContinue));
      ExpectBlockEnd();
    } else if (kw == "filter") {
      auto n = MakeNode(Node::Kind::kFilterBlock);
      n->filter = ParseFilter(nullptr);
      while (IsOp("|")) n->filter = ParseFilter(std::move(n->filter));
      ExpectBlockEnd();
      std::string which;
      n->bodies.push_back(ParseBody({"endfilter"}, &which));
      ExpectBlockEnd();
      body.push_back(std::move(n));
    } else if (kw == "generation") {  // Hugging Face extension: renders its body
      ExpectBlockEnd();
      std::string which;
      Body inner = ParseBody({"endgeneration"}, &which);
      ExpectBlockEnd();
      for (auto& n : inner) body.push_back(std::move(n));
    } else {
      p_--;
      Error("unknown or unsupported statement '" + kw + "'");
    }
  }

  NodePtr ParseIf() {
    auto n = MakeNode(Node::Kind::kIf);
    n->conditions.push_back(ParseExpr());
    ExpectBlockEnd();
    while (true) {
      std::string which;
      n->bodies.push_back(ParseBody({"elif", "else", "endif"}, &which));
      if (which == "elif") {
        n->conditions.push_back(ParseExpr());
        ExpectBlockEnd();
      } else if (which == "else") {
        ExpectBlockEnd();
        n->bodies.push_back(ParseBody({"endif"}, &which));
        ExpectBlockEnd();
        return n;
      } else {
        ExpectBlockEnd();
        return n;
      }
    }
  }

  std::vector<std::string> ParseTargets() {
    std::vector<std::string> names;
    bool paren = SkipOp("(");
    do {
      if (IsOp(")") || IsName("in") || IsOp("=")) break;
      names.push_back(ExpectName());
    } while (SkipOp(","));
    if (paren) ExpectOp(")");
    if (names.empty()) Error("expected an assignment target");
    return names;
  }

  NodePtr ParseFor() {
    auto n = MakeNode(Node::Kind::kFor);
    n->targets = ParseTargets();
    if (!SkipName("in")) Error("expected 'in', got " + Describe(Cur()));
    n->expr = ParseTupleExpr(/*with_cond=*/false);
    if (SkipName("if")) n->filter = ParseExpr();
    if (IsName("recursive")) Error("recursive loops are not supported");
    ExpectBlockEnd();
    ++loop_depth_;
    std::string which;
    n->bodies.push_back(ParseBody({"else", "endfor"}, &which));
    --loop_depth_;
    ExpectBlockEnd();
    if (which == "else") {
      n->bodies.push_back(ParseBody({"endfor"}, &which));
      ExpectBlockEnd();
    }
    return n;
  }

  NodePtr ParseSet() {
    auto n = MakeNode(Node::Kind::kSet);
    std::string first = ExpectName();
    n->targets.push_back(first);
    if (SkipOp(".")) {
      n->attr = ExpectName();
    } else {
      while (SkipOp(",")) n->targets.push_back(ExpectName());
    }
    if (SkipOp("=")) {
      n->expr = ParseTupleExpr();
      ExpectBlockEnd();
      return n;
    }
    if (n->targets.size() != 1 || !n->attr.empty()) Error("expected '=' in set");
    while (IsOp("|")) n->filter = ParseFilter(std::move(n->filter));
    ExpectBlockEnd();
    std::string which;
    n->bodies.push_back(ParseBody({"endset"}, &which));
    ExpectBlockEnd();
    return n;
  }

  NodePtr ParseMacro() {
    auto n = MakeNode(Node::Kind::kMacro);
    n->name = ExpectName();
    ExpectOp("(");
    while (!IsOp(")")) {
      n->targets.push_back(ExpectName());
      n->defaults.push_back(SkipOp("=") ? ParseExpr() : nullptr);
      if (!SkipOp(",")) break;
    }
    ExpectOp(")");
    ExpectBlockEnd();
    int saved_loop_depth = loop_depth_;
    loop_depth_ = 0;
    std::string which;
    n->bodies.push_back(ParseBody({"endmacro"}, &which));
    loop_depth_ = saved_loop_depth;
    if (Cur().type == TokenType::kName) Next();  // {% endmacro name %}
    ExpectBlockEnd();
    return n;
  }

  // ---------------------------------------------------------------- expressions

  // expr [, expr]* -> a tuple when there is a comma.
  ExprPtr ParseTupleExpr(bool with_cond = true) {
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

  ExprPtr ParseExpr() {
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

  ExprPtr Binary(const std::string& op, ExprPtr l, ExprPtr r) {
    auto b = Make(Expr::Kind::kBinary);
    b->name = op;
    b->args.push_back(std::move(l));
    b->args.push_back(std::move(r));
    return b;
  }

  ExprPtr ParseOr() {
    ExprPtr e = ParseAnd();
    while (SkipName("or")) e = Binary("or", std::move(e), ParseAnd());
    return e;
  }
  ExprPtr ParseAnd() {
    ExprPtr e = ParseNot();
    while (SkipName("and")) e = Binary("and", std::move(e), ParseNot());
    return e;
  }
  ExprPtr ParseNot() {
    DepthGuard guard(this);
    if (SkipName("not")) {
      auto u = Make(Expr::Kind::kUnary);
      u->name = "not";
      u->args.push_back(ParseNot());
      return u;
    }
    return ParseCompare();
  }
  ExprPtr ParseCompare() {
    ExprPtr e = ParseMath1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (Cur().type == TokenType::kOp &&
          (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" || Cur().text == ">" ||
           Cur().text == "<=" || Cur().text == ">=")) {
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
  ExprPtr ParseMath1() {
    ExprPtr e = ParseConcat();
    while (IsOp("+") || IsOp("-")) {
      std::string op = Cur().text;
      Next();
      e = Binary(op, std::move(e), ParseConcat());
    }
    return e;
  }
  ExprPtr ParseConcat() {
    ExprPtr e = ParseMath2();
    while (SkipOp("~")) e = Binary("~", std::move(e), ParseMath2());
    return e;
  }
  ExprPtr ParseMath2() {
    ExprPtr e = ParsePow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Cur().text;
      Next();
      e = Binary(op, std::move(e), ParsePow());
    }
    return e;
  }
  ExprPtr ParsePow() {
    ExprPtr e = ParseUnary(true);
    while (SkipOp("**")) e = Binary("**", std::move(e), ParseUnary(true));
    return e;
  }
  ExprPtr ParseUnary(bool with_filter) {
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

  ExprPtr ParsePrimary() {
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
      while (SkipOp(",")) {
        if (IsOp(")")) break;
        tup->args.push_back(ParseExpr());
      }
      ExpectOp(")");
      return tup;
    }
    if (SkipOp("[")) {
      auto l = Make(Expr::Kind::kList);
      while (!IsOp("]")) {
        l->args.push_back(ParseExpr());
        if (!SkipOp(",")) break;
      }
      ExpectOp("]");
      return l;
    }
    if (SkipOp("{")) {
      auto d = Make(Expr::Kind::kDict);
      while (!IsOp("}")) {
        d->args.push_back(ParseExpr());
        ExpectOp(":");
        d->args.push_back(ParseExpr());
        if (!SkipOp(",")) break;
      }
      ExpectOp("}");
      return d;
    }
    Error("unexpected " + Describe(t));
  }

  ExprPtr ParsePostfix(ExprPtr e) {
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

  ExprPtr ParseSubscript(ExprPtr target) {
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

  // Parses "(a, k=v, ...)" into e->args / e->arg_names (appended).
  void ParseCallArgs(Expr* e) {
    ExpectOp("(");
    while (!IsOp(")")) {
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
      if (!SkipOp(",")) break;
    }
    ExpectOp(")");
  }

  ExprPtr ParseCall(ExprPtr callee) {
    auto c = Make(Expr::Kind::kCall);
    c->args.push_back(std::move(callee));
    c->arg_names.emplace_back();
    ParseCallArgs(c.get());
    return c;
  }

  ExprPtr ParseFilter(ExprPtr input) {
    if (input) ExpectOp("|");
    auto f = Make(Expr::Kind::kFilter);
    f->name = ExpectName();
    if (!HasFilter(f->name)) {
      p_--;
      Error("no filter named '" + f->name + "'");
    }
    f->args.push_back(std::move(input));
    f->arg_names.emplace_back();
    if (IsOp("(")) ParseCallArgs(f.get());
    return f;
  }

  ExprPtr ParseFilterExpr(ExprPtr e) {
    while (true) {
      if (IsOp("|")) {
        e = ParseFilter(std::move(e));
      } else if (IsName("is")) {
        Next();
        auto t = Make(Expr::Kind::kTest);
        t->negated = SkipName("not");
        t->name = ExpectName();
        if (!HasTest(t->name)) {
          p_--;
          Error("no test named '" + t->name + "'");
        }
        t->args.push_back(std::move(e));
        t->arg_names.emplace_back();
        if (IsOp("(")) {
          ParseCallArgs(t.get());
        } else if ((Cur().type == TokenType::kName || Cur().type == TokenType::kString ||
                    Cur().type == TokenType::kInt || Cur().type == TokenType::kFloat || IsOp("[") || IsOp("{")) &&
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

  std::vector<Token> toks_;
  size_t p_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Program Parse(const std::string& source) { return Parser(Lex(source)).Run(); }

}  // namespace pg::jinja
