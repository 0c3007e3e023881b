#include "gpu/runtime/emu_context.h"

#include <cstdint>

#include "base/check.h"

#if defined(__x86_64__)
// pg_emu_switch_stack(save_sp, load_sp): pushes rbp, rbx, r12-r15 and a
// 16-byte slot holding MXCSR (offset 8) and the x87 control word (offset
// 12), stores the stack pointer in *save_sp, then loads load_sp and undoes
// the same steps from there; its `ret` continues where that stack was saved
// (or, for a new context, at the entry MakeContext put there).
asm(R"(
  .text
  .p2align 4
  .globl pg_emu_switch_stack
  .hidden pg_emu_switch_stack
  .type pg_emu_switch_stack, @function
pg_emu_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw 12(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr 8(%rsp)
  fldcw 12(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size pg_emu_switch_stack, .-pg_emu_switch_stack
)");
extern "C" void pg_emu_switch_stack(void** save_sp, void* load_sp);
#endif

namespace pg::gpu::emu {

#if defined(__x86_64__)

// The frame pg_emu_switch_stack pops, from the lowest address up: the
// 16-byte control slot, r15 r14 r13 r12 rbx rbp, the address its `ret`
// jumps to (entry), and a zero return address for entry. The stack top is
// 16-aligned, so entry starts with rsp = 8 (mod 16), as after a call.
void MakeContext(EmuContext* ctx, unsigned char* stack, size_t bytes, void (*entry)()) {
  PG_CHECK(bytes >= 4096);
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15};
  auto* sp = reinterpret_cast<uint64_t*>(top);
  uint32_t mxcsr = 0;
  uint16_t fpcw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  *--sp = 0;                                   // entry's return address: it never returns
  *--sp = reinterpret_cast<uintptr_t>(entry);  // where `ret` goes
  for (int i = 0; i < 6; ++i) *--sp = 0;       // rbp rbx r12 r13 r14 r15
  *--sp = uint64_t{mxcsr} | (uint64_t{fpcw} << 32);
  *--sp = 0;
  ctx->sp = sp;
}

void SwitchContext(EmuContext* from, EmuContext* to) { pg_emu_switch_stack(&from->sp, to->sp); }

#else

void MakeContext(EmuContext* ctx, unsigned char* stack, size_t bytes, void (*entry)()) {
  PG_CHECK(getcontext(&ctx->uc) == 0);
  ctx->uc.uc_stack.ss_sp = stack;
  ctx->uc.uc_stack.ss_size = bytes;
  ctx->uc.uc_link = nullptr;
  makecontext(&ctx->uc, entry, 0);
}

void SwitchContext(EmuContext* from, EmuContext* to) { PG_CHECK(swapcontext(&from->uc, &to->uc) == 0); }

#endif

}  // namespace pg::gpu::emu
