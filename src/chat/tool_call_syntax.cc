#include "chat/tool_call_syntax.h"

#include <cctype>

#include "base/bounded_json.h"
#include "base/tool_call_markers.h"

namespace pg {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::string_view kToolSep = tool_markers::kDsSep;
constexpr size_t kMaxNameBytes = 256;

// Function names: no whitespace, quotes, brackets or markup.
bool IsNameChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x80) return true;  // part of a non-ASCII character
  return std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ':' || c == '/';
}

// A read position over held text.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  void Space() {
    while (i < s.size() && IsJsonSpace(s[i])) ++i;
  }
  HeaderMatch Lit(std::string_view lit) {
    std::string_view rest = s.substr(i);
    if (rest.size() < lit.size()) return lit.substr(0, rest.size()) == rest ? HeaderMatch::kMore : HeaderMatch::kNo;
    if (rest.substr(0, lit.size()) != lit) return HeaderMatch::kNo;
    i += lit.size();
    return HeaderMatch::kYes;
  }
  HeaderMatch String(std::string* out) {
    if (i >= s.size()) return HeaderMatch::kMore;
    if (s[i] != '"') return HeaderMatch::kNo;
    size_t j = i + 1;
    for (bool esc = false; j < s.size(); ++j) {
      if (esc) {
        esc = false;
      } else if (s[j] == '\\') {
        esc = true;
      } else if (s[j] == '"') {
        break;
      }
    }
    // A name longer than kMaxNameBytes is refused whether or not its closing
    // quote has arrived yet, so a streamed header decides as the whole text does.
    if (j - i > kMaxNameBytes) return HeaderMatch::kNo;
    if (j >= s.size()) return HeaderMatch::kMore;
    ojson v = ParseBoundedOrDiscard(s.substr(i, j - i + 1));
    if (!v.is_string()) return HeaderMatch::kNo;
    *out = v.get<std::string>();
    i = j + 1;
    return out->empty() ? HeaderMatch::kNo : HeaderMatch::kYes;
  }
  // A bare function name, ended by any other character.
  HeaderMatch Name(std::string* out) {
    size_t j = i;
    while (j < s.size() && IsNameChar(s[j]) && j - i <= kMaxNameBytes) ++j;
    if (j - i > kMaxNameBytes) return HeaderMatch::kNo;
    if (j == s.size()) return HeaderMatch::kMore;
    if (j == i) return HeaderMatch::kNo;
    *out = std::string(s.substr(i, j - i));
    i = j;
    return HeaderMatch::kYes;
  }
};

#define PG_MATCH(expr)                      \
  do {                                      \
    HeaderMatch m_ = (expr);                \
    if (m_ != HeaderMatch::kYes) return m_; \
  } while (0)

// Ends a header at the arguments' "{".
HeaderMatch OpenBrace(Cursor& c, size_t* args_at) {
  c.Space();
  PG_MATCH(c.Lit("{"));
  *args_at = c.i - 1;
  return HeaderMatch::kYes;
}

}  // namespace

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view TrimJsonSpace(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsJsonSpace(s[b])) ++b;
  while (e > b && IsJsonSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

HeaderMatch MatchJsonHeader(std::string_view s, std::string* name, size_t* args_at) {
  Cursor c{s};
  c.Space();
  PG_MATCH(c.Lit("{"));
  c.Space();
  PG_MATCH(c.Lit("\"name\""));
  c.Space();
  PG_MATCH(c.Lit(":"));
  c.Space();
  PG_MATCH(c.String(name));
  c.Space();
  PG_MATCH(c.Lit(","));
  c.Space();
  HeaderMatch key = c.Lit("\"arguments\"");
  if (key == HeaderMatch::kNo) key = c.Lit("\"parameters\"");
  PG_MATCH(key);
  c.Space();
  PG_MATCH(c.Lit(":"));
  return OpenBrace(c, args_at);
}

HeaderMatch MatchDeepSeekV3Header(std::string_view s, std::string* name, size_t* args_at) {
  Cursor c{s};
  c.Space();
  PG_MATCH(c.Lit("function"));
  PG_MATCH(c.Lit(kToolSep));
  PG_MATCH(c.Name(name));
  c.Space();
  PG_MATCH(c.Lit(tool_markers::kDsJsonFence));
  return OpenBrace(c, args_at);
}

HeaderMatch MatchDeepSeekV31Header(std::string_view s, std::string* name, size_t* args_at) {
  Cursor c{s};
  c.Space();
  PG_MATCH(c.Name(name));
  PG_MATCH(c.Lit(kToolSep));
  return OpenBrace(c, args_at);
}

HeaderMatch MatchGlmHeader(std::string_view s, std::string* name, size_t* args_at) {
  Cursor c{s};
  c.Space();
  PG_MATCH(c.Name(name));
  if (s[c.i] != '<' && !IsJsonSpace(s[c.i])) return HeaderMatch::kNo;
  *args_at = c.i;
  return HeaderMatch::kYes;
}

#undef PG_MATCH

std::optional<JsonCall> CallFromJson(std::string_view text) {
  ojson j = ParseBoundedOrDiscard(text);
  if (!j.is_object()) return std::nullopt;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return std::nullopt;
  auto args = j.find("arguments");
  if (args == j.end()) args = j.find("parameters");
  ojson obj = ojson::object();
  if (args != j.end()) {
    obj = args->is_string() ? ParseBoundedOrDiscard(args->get_ref<const std::string&>()) : *args;
    if (!obj.is_object()) return std::nullopt;
  }
  return JsonCall{name->get<std::string>(), obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

bool IsStringParam(const ojson& tools, const std::string& function, const std::string& key) {
  if (!tools.is_array()) return false;
  for (const ojson& t : tools) {
    const ojson* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
    if (!fn || !fn->is_object() || fn->value("name", ojson()) != function) continue;
    const ojson params = fn->value("parameters", ojson::object());
    if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object()) return false;
    const ojson& props = params["properties"];
    auto p = props.find(key);
    if (p == props.end() || !p->is_object()) return false;
    const ojson type = p->value("type", ojson());
    bool is_string = type == "string";
    if (type.is_array()) {
      for (const ojson& ty : type) is_string = is_string || ty == "string";
    }
    return is_string;
  }
  return false;
}

std::string JsonStringBody(std::string_view text) {
  std::string s = ojson(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.substr(1, s.size() - 2);
}

std::string GlmValueJson(const ojson& tools, const std::string& function, const std::string& key,
                         std::string_view value) {
  ojson parsed;
  if (!IsStringParam(tools, function, key))
    parsed = ParseBoundedOrDiscard(TrimJsonSpace(value), kDefaultMaxJsonDepth - 1);  // inside the arguments object
  if (parsed.is_null() || parsed.is_discarded()) parsed = std::string(value);
  return parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pg
