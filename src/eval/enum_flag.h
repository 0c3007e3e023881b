// ParseEnumFlag: an eval choice (--endpoint, --prompt-style) by its name in
// the enum's name table (base/enum_names.h), or the error naming the choices.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "base/enum_names.h"
#include "base/status.h"

namespace pg {

// The value named `name`, or InvalidArgument: unknown WHAT "NAME" (want A or
// B; with more names: A, B or C).
template <typename E, size_t N>
Result<E> ParseEnumFlag(std::string_view name, const char* const (&names)[N], std::string_view what) {
  if (const auto e = EnumFromName<E>(name, names)) return *e;
  std::string want;
  for (size_t i = 0; i < N; ++i) want += fmt::format("{}{}", i == 0 ? "" : i + 1 == N ? " or " : ", ", names[i]);
  return InvalidArgument(fmt::format("unknown {} \"{}\" (want {})", what, name, want));
}

}  // namespace pg
