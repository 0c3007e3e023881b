// HfRegex: a split or replace pattern from a Hugging Face tokenizer.json,
// compiled with PCRE2 (UTF, Unicode properties, JIT). Hugging Face runs these
// patterns with Oniguruma, where \s is the Unicode White_Space property;
// PCRE2's \s under UCP has differed from it between releases, so \s and \S
// are rewritten to the explicit White_Space set before compiling. Everything else
// the families use (\p{L}, \p{N}, {1,3}, lookahead (?!\S), case-insensitive
// groups (?i:...)) is PCRE2 syntax already.
//
// Thread-safety: immutable after Compile; FindAll may run concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace pg {

class HfRegex {
 public:
  ~HfRegex();
  HfRegex(const HfRegex&) = delete;
  HfRegex& operator=(const HfRegex&) = delete;

  // Errors name the pattern and PCRE2's reason (InvalidArgument), or the
  // construct prosgrow does not translate (Unimplemented: \S inside a class).
  static Result<std::shared_ptr<const HfRegex>> Compile(const std::string& pattern);

  // The non-empty matches in text (valid UTF-8), left to right, as byte
  // ranges [begin, end). Empty matches are skipped, as Hugging Face's split
  // drops the empty pieces they would make.
  std::vector<std::pair<size_t, size_t>> FindAll(std::string_view text) const;

 private:
  HfRegex() = default;
  struct Code;
  std::unique_ptr<Code> code_;
};

// The pattern with \s / \S spelled out as the Unicode White_Space set.
// Exposed for its test.
Result<std::string> RewriteWhitespaceClasses(const std::string& pattern);

}  // namespace pg
