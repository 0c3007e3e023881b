// LockedCopy: a copy of a field read under the mutex that guards it, the
// whole body of a thread-safe getter: `return LockedCopy(mu_, dropped_);`.
// Thread-safety: takes `mu` for the copy.
#pragma once

#include <mutex>

namespace pg {

template <typename T>
T LockedCopy(std::mutex& mu, const T& field) {
  std::lock_guard<std::mutex> lock(mu);
  return field;
}

}  // namespace pg
