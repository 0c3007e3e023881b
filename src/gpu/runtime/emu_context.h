// EmuContext: one saved execution context of the emulator's block scheduler
// (a fiber of a kernel thread, or the scheduler itself) and the switch
// between two of them (emu_fiber.cc runs a block's threads with it).
//
// On x86-64 a switch saves the callee-saved registers (rbx, rbp, r12-r15),
// MXCSR and the x87 control word on the running stack and restores them
// from the other one: everything the SysV ABI says a call keeps, and no
// system call. Elsewhere it is ucontext's swapcontext, which also saves the
// signal mask (one system call per switch).
//
// Sanitizers are the caller's business: a switch here announces nothing to
// AddressSanitizer (emu_fiber.cc wraps each switch in
// __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber).
#pragma once

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace pg::gpu::emu {

struct EmuContext {
#if defined(__x86_64__)
  void* sp = nullptr;  // the stack pointer a switch saved, or MakeContext's frame
#else
  ucontext_t uc;
#endif
};

// Makes `ctx` run entry() on the stack [stack, stack + bytes) the first time
// it is switched to. entry must never return.
void MakeContext(EmuContext* ctx, unsigned char* stack, size_t bytes, void (*entry)());

// Saves the running context in `from` and continues `to`; returns when
// something switches back to `from`.
void SwitchContext(EmuContext* from, EmuContext* to);

}  // namespace pg::gpu::emu
