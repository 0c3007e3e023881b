// Private test helper for the tokenizer tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg::testing {

// `text` split into words by the pre-tokenizer, as strings; the words cover
// the whole text.
inline std::vector<std::string> PreTokenizedWords(PreTokenizerKind kind, const std::string& text) {
  const auto cpts = DecodeUtf8(text);
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t len : PreTokenize(kind, cpts)) {
    std::string w;
    for (size_t i = start; i < start + len; ++i) AppendUtf8(cpts[i], &w);
    out.push_back(w);
    start += len;
  }
  EXPECT_EQ(start, cpts.size());
  return out;
}

}  // namespace pg::testing
