// Helpers shared by the eval tests: a small synthetic GSM8K dataset.
// Thread-safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <string>

namespace pg::testing_util {

// Question i of the synthetic dataset.
inline std::string SyntheticQuestion(int i) {
  return fmt::format("Tom has {} apples and buys {} more. How many apples does he have?", i, i + 2);
}

// Reference answer of question i.
inline int SyntheticAnswer(int i) { return 2 * i + 2; }

// n rows of GSM8K JSONL with calculator annotations and "#### N".
inline std::string SyntheticJsonl(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += fmt::format("{{\"question\": \"{}\", \"answer\": \"He has {}+{}=<<{}+{}={}>>{} apples.\\n#### {}\"}}\n",
                       SyntheticQuestion(i), i, i + 2, i, i + 2, SyntheticAnswer(i), SyntheticAnswer(i),
                       SyntheticAnswer(i));
  }
  return out;
}

}  // namespace pg::testing_util
