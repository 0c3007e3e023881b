#include "base/check.h"

namespace pg {

void CheckFailed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "CHECK failed at %s:%d: %s %s\n", file, line, cond, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pg
