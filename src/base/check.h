// CHECK: fatal assertion for programming errors (never for user input).
// Prints file:line and the condition, then aborts. Always on, also in release.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace pg {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const char* msg);
}

#define PG_CHECK(cond)                                                                  \
  do {                                                                                  \
    if (__builtin_expect(!(cond), 0)) ::pg::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)

#define PG_CHECK_MSG(cond, msg)                                                            \
  do {                                                                                     \
    if (__builtin_expect(!(cond), 0)) ::pg::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
