#include "tokenizer/hf_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace pg {
namespace {

// Unicode White_Space, as class contents (no brackets).
constexpr const char* kWhiteSpace =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// One JIT stack per thread, big enough for long runs of one class.
pcre2_match_context* ThreadMatchContext() {
  struct Holder {
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    pcre2_match_context* ctx = pcre2_match_context_create(nullptr);
    Holder() { pcre2_jit_stack_assign(ctx, nullptr, stack); }
    ~Holder() {
      pcre2_match_context_free(ctx);
      pcre2_jit_stack_free(stack);
    }
  };
  thread_local Holder holder;
  return holder.ctx;
}

}  // namespace

struct HfRegex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

HfRegex::~HfRegex() = default;

Result<std::string> RewriteWhitespaceClasses(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  size_t class_start = 0;  // index in out just after '[' or '[^'
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's' || e == 'S') {
        if (in_class && e == 'S') {
          return Unimplemented("regex '" + pattern + "': \\S inside a character class is not supported");
        }
        if (in_class) {
          out += kWhiteSpace;
        } else {
          out += e == 's' ? "[" : "[^";
          out += kWhiteSpace;
          out += "]";
        }
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      class_start = out.size();
      continue;
    }
    if (in_class && c == ']' && out.size() > class_start) in_class = false;
    out += c;
  }
  return out;
}

Result<std::shared_ptr<const HfRegex>> HfRegex::Compile(const std::string& pattern) {
  PG_ASSIGN_OR_RETURN(std::string rewritten, RewriteWhitespaceClasses(pattern));
  int err = 0;
  PCRE2_SIZE err_off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    return InvalidArgument("regex '" + pattern + "' does not compile: " + reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT (unsupported CPU) matching still works
  std::shared_ptr<HfRegex> re(new HfRegex());
  re->code_ = std::make_unique<Code>();
  re->code_->code = code;
  return std::shared_ptr<const HfRegex>(std::move(re));
}

std::vector<std::pair<size_t, size_t>> HfRegex::FindAll(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  pcre2_match_context* ctx = ThreadMatchContext();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, ctx);
    if (rc < 0) break;  // no match (or a resource limit): the rest is one gap
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t b = ov[0], e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      pos = e;
      continue;
    }
    // Empty match: step over one character and search again.
    pos = b + 1;
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  }
  pcre2_match_data_free(md);
  return out;
}

}  // namespace pg
