// EnumName / EnumFromName: the names of a small enum as one table, for the
// enums whose values are 0, 1, ..., N-1 in declaration order (e.g. IsaLevel,
// MetricType, PromptMode, DrafterKind). names[i] is value i's name, so the
// table is the one place that pairs values with their spellings, both ways.
//
// Thread-safety: pure functions over constant tables.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace pg {

// names[e], or `unknown` for a value past the table.
template <typename E, size_t N>
constexpr const char* EnumName(E e, const char* const (&names)[N], const char* unknown = "?") {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : unknown;
}

// The value whose name is `s` (exact, case-sensitive), or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> EnumFromName(std::string_view s, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace pg
