#include "chat/jinja_parser.h"

#include "chat/jinja_builtins.h"
#include "chat/jinja_parser_impl.h"

namespace pg::jinja {

Body Parser::ParseBody(const std::vector<std::string>& ends, std::string* which) {
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

void Parser::ParseStatement(Body& body) {
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

NodePtr Parser::ParseIf() {
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

std::vector<std::string> Parser::ParseTargets() {
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

NodePtr Parser::ParseFor() {
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

NodePtr Parser::ParseSet() {
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

NodePtr Parser::ParseMacro() {
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

Program Parse(const std::string& source) { return Parser(Lex(source)).Run(); }

}  // namespace pg::jinja
