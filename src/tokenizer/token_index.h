// TokenIndex: token text -> id lookup with string_view keys (no temporary
// std::string per lookup). Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pg {

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

using TokenIndex = std::unordered_map<std::string, int32_t, StringViewHash, std::equal_to<>>;

// Returns the id of text, or -1.
inline int32_t LookupToken(const TokenIndex& index, std::string_view text) {
  auto it = index.find(text);
  return it == index.end() ? -1 : it->second;
}

}  // namespace pg
