// jinja::Lex: splits a template source into tokens, the way Jinja2 does
// with trim_blocks=True and lstrip_blocks=True:
//   - text between tags becomes one kText token (comments vanish);
//   - `{%-`, `{{-`, `{#-` strip all whitespace before the tag, `-%}`, `-}}`,
//     `-#}` all whitespace after it; `{%+` / `+%}` disable lstrip / trim;
//   - lstrip_blocks: spaces/tabs between a line start and `{%` / `{#` go;
//   - trim_blocks: the first newline after `%}` / `#}` goes;
//   - newlines are normalized to "\n" and one trailing newline is dropped
//     (keep_trailing_newline=False).
// Inside tags it produces expression tokens; the closing delimiter is only
// recognized outside brackets, so `{{ {'a': {}} }}` works.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pg::jinja {

enum class TokenType {
  kText,        // text: literal output
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,        // text: identifier or keyword
  kString,      // text: decoded string literal
  kInt,         // int_value
  kFloat,       // float_value
  kOp,          // text: operator or punctuation (`==`, `(`, `.`, ...)
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;  // 1-based source line, for error messages
};

// Throws jinja::Error ("line N: ...") on a lexical error (unterminated
// string or tag, unexpected character).
std::vector<Token> Lex(const std::string& source);

}  // namespace pg::jinja
