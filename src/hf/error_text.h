// The checkpoint readers' one-line error text: QuotedText (base/quoted_text.h)
// for a name or value read from a file, ShapeText for a tensor shape as
// "[a, b]". Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/quoted_text.h"

namespace pg {

inline std::string ShapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace pg
