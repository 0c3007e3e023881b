#include "base/bounded_json.h"

#include <fmt/format.h>

namespace pg {
namespace {

// A SAX handler that builds the tree with nlohmann's own DOM builder and
// aborts (returns false) as soon as nesting exceeds the limit.
template <typename Json>
class DepthBoundedSax {
 public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  DepthBoundedSax(Json& out, int max_depth) : dom_(out, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  bool key(string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t pos, const std::string& token, const Exception& ex) {
    syntax_error_ = ex.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& syntax_error() const { return syntax_error_; }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::string syntax_error_;
};

template <typename Json>
JsonParseError Parse(std::string_view text, int max_depth, Json* out) {
  *out = Json();
  // nlohmann's lexer takes a NUL byte for the end of the input, so
  // `{"a":1}\0{...}` would parse and drop the rest. A raw NUL is valid
  // nowhere in JSON text (RFC 8259: strings escape it as \u0000).
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    *out = Json(Json::value_t::discarded);
    return {JsonParseError::Kind::kSyntax, fmt::format("a NUL byte at offset {} (JSON text never holds one; "
                                                       "escape it as \\u0000 inside a string)",
                                                       nul)};
  }
  DepthBoundedSax<Json> sax(*out, max_depth);
  bool ok = Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                            /*strict=*/true);
  if (ok) return {};
  *out = Json(Json::value_t::discarded);
  if (sax.too_deep()) {
    return {JsonParseError::Kind::kTooDeep, fmt::format("JSON nests deeper than {} levels", max_depth)};
  }
  return {JsonParseError::Kind::kSyntax, sax.syntax_error().empty() ? "malformed JSON" : sax.syntax_error()};
}

}  // namespace

JsonParseError ParseBoundedJson(std::string_view text, int max_depth, nlohmann::ordered_json* out) {
  return Parse(text, max_depth, out);
}

JsonParseError ParseBoundedJson(std::string_view text, int max_depth, nlohmann::json* out) {
  return Parse(text, max_depth, out);
}

nlohmann::ordered_json ParseBoundedOrDiscard(std::string_view text, int max_depth) {
  nlohmann::ordered_json out;
  ParseBoundedJson(text, max_depth, &out);
  return out;
}

}  // namespace pg
