// The emulator's context switch (runtime/emu_context.h): values held across
// switches, each context's floating-point control state its own, and a new
// context's stack fit for calls that need the ABI's alignment.
#if defined(PROSGROW_GPU_EMULATED)
#include "gpu/runtime/emu_context.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cstdio>
#include <memory>
#include <string>

namespace pg::gpu::emu {
namespace {

constexpr size_t kStack = 64 * 1024;

struct PingPong {
  EmuContext main, fiber;
  int rounds = 0;
  long fiber_sum = 0;
  int fiber_round = -1;  // FE rounding mode the fiber saw after a switch back
  std::string printed;   // what the fiber formatted with snprintf
};
PingPong* g = nullptr;

void PingPongEntry() {
  // Locals the compiler keeps in callee-saved registers across the calls.
  long a = 1, b = 2, c = 3, d = 5, e = 7, f = 11;
  for (int i = 0;; ++i) {
    g->fiber_sum = a + b + c + d + e + f + i;
    SwitchContext(&g->fiber, &g->main);
    a += 1, b += 2, c += 3, d += 5, e += 7, f += 11;
  }
}

TEST(EmuContext, SwitchesKeepEachSidesValues) {
  PingPong pp;
  g = &pp;
  auto stack = std::make_unique<unsigned char[]>(kStack);
  MakeContext(&pp.fiber, stack.get(), kStack, PingPongEntry);
  long x = 100, y = 200;
  for (int i = 0; i < 100000; ++i) {
    SwitchContext(&pp.main, &pp.fiber);
    // After round i the fiber's locals have grown by i * (1+2+3+5+7+11).
    ASSERT_EQ(pp.fiber_sum, 29 + long{i} * 29 + i) << "round " << i;
    x += 3, y -= 1;
  }
  EXPECT_EQ(x, 100 + 3 * 100000);
  EXPECT_EQ(y, 200 - 100000);
  g = nullptr;
}

void RoundingEntry() {
  std::fesetround(FE_TOWARDZERO);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", 2.0 / 3.0);  // needs a 16-aligned stack
  g->printed = buf;
  SwitchContext(&g->fiber, &g->main);
  g->fiber_round = std::fegetround();
  SwitchContext(&g->fiber, &g->main);
  for (;;) SwitchContext(&g->fiber, &g->main);
}

TEST(EmuContext, FloatingPointControlIsPerContext) {
  PingPong pp;
  g = &pp;
  auto stack = std::make_unique<unsigned char[]>(kStack);
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  MakeContext(&pp.fiber, stack.get(), kStack, RoundingEntry);
  SwitchContext(&pp.main, &pp.fiber);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);  // the fiber's mode stayed with the fiber
  EXPECT_EQ(pp.printed, "0.666");
  SwitchContext(&pp.main, &pp.fiber);
  EXPECT_EQ(pp.fiber_round, FE_TOWARDZERO);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  g = nullptr;
}

}  // namespace
}  // namespace pg::gpu::emu
#endif  // PROSGROW_GPU_EMULATED
