// jinja::Parser: the recursive-descent parser behind jinja::Parse
// (jinja_parser.h). Internal to src/chat: token cursor helpers inline here,
// statements in jinja_parser.cc, expressions in jinja_expr_parser.cc.
// Thread-safety: one parser per Parse call.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "base/function_ref.h"
#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"
#include "chat/jinja_parser.h"

namespace pg::jinja {

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

  // statements (jinja_parser.cc)
  // Parses until a block tag whose keyword is in `ends` (consumed, stored in
  // *which; the rest of that tag is left to the caller) or the end of input.
  Body ParseBody(const std::vector<std::string>& ends, std::string* which);
  void ParseStatement(Body& body);
  NodePtr ParseIf();
  std::vector<std::string> ParseTargets();
  NodePtr ParseFor();
  NodePtr ParseSet();
  NodePtr ParseMacro();

  // expressions (jinja_expr_parser.cc)
  // expr [, expr]* -> a tuple when there is a comma.
  ExprPtr ParseTupleExpr(bool with_cond = true);
  ExprPtr ParseExpr();
  ExprPtr Binary(const std::string& op, ExprPtr l, ExprPtr r);
  // Left-associative binary operators: operand (op operand)*, op one of
  // `ops` (keywords when `names`, else operator tokens).
  ExprPtr ParseBinaryChain(FunctionRef<ExprPtr()> operand, std::initializer_list<const char*> ops, bool names);
  // Comma-separated items up to the operator `close` (a trailing comma
  // allowed), each read by `item`; then `close`.
  void ParseItems(const char* close, FunctionRef<void()> item);
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParsePostfix(ExprPtr e);
  ExprPtr ParseSubscript(ExprPtr target);
  // Parses "(a, k=v, ...)" into e->args / e->arg_names (appended).
  void ParseCallArgs(Expr* e);
  ExprPtr ParseCall(ExprPtr callee);
  // A filter or test node (kind) named by the next token, which `known`
  // must know (else "no WHAT named 'NAME'", at the name), with `input` as its
  // first argument.
  ExprPtr ParseNamedCall(Expr::Kind kind, const char* what, bool (*known)(std::string_view), ExprPtr input);
  ExprPtr ParseFilter(ExprPtr input);
  ExprPtr ParseFilterExpr(ExprPtr e);

  std::vector<Token> toks_;
  size_t p_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace pg::jinja
