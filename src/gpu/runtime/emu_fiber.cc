// The emulator's block scheduler: a block's threads as fibers on the calling
// OS thread, switched only at barriers (emu_runtime.h has the model).
//
// Fibers persist per OS thread (a pool that grows to the largest block seen)
// and loop: run the kernel body for their thread, report exit, park. On
// x86-64 a switch is SwitchStack (below): it saves the callee-saved
// registers, MXCSR and the x87 control word on the old stack and restores
// them from the new one, which is all the SysV ABI asks a call to keep (a
// __builtin_setjmp / longjmp pair keeps less: UBSan caught a kernel's cached
// TLS address clobbered across a barrier). Elsewhere a switch is a
// swapcontext, which also saves the signal mask with a system call per
// switch. Under AddressSanitizer every switch is announced with
// __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber.
//
// Barriers: an arriving thread counts itself; the last live thread to
// arrive moves the waiters back to the run queue and carries on. A thread
// that exits counts as having left every barrier. An empty run queue with
// threads still waiting is a deadlock: fatal, with the kernel's name.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "base/check.h"
#include "gpu/runtime/emu_context.h"
#include "gpu/runtime/emu_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define PG_EMU_ASAN 1
#else
#define PG_EMU_ASAN 0
#endif

namespace pg::gpu::emu {

constinit thread_local const ThreadCtx* tl_thread = nullptr;
constinit thread_local const BlockCtx* tl_block = nullptr;

namespace {

int g_warp_size = 32;

#if PG_EMU_ASAN
constexpr size_t kStackBytes = 512 * 1024;
#else
constexpr size_t kStackBytes = 128 * 1024;
#endif

struct Fiber {
  EmuContext ctx;
  std::unique_ptr<unsigned char[]> stack;
  ThreadCtx t;
  bool started = false;
  bool done = false;
  void* fake_stack = nullptr;  // ASan
};

struct Scheduler {
  EmuContext home;  // the scheduler's context while a fiber runs
  std::vector<std::unique_ptr<Fiber>> fibers;
  int n = 0;  // threads of the running block
  BlockCtx block;
  void (*body)(void*) = nullptr;
  void* ctx = nullptr;
  const char* name = "";
  int current = -1;
  int starting = -1;
  // Barrier state of the running block.
  int live = 0;
  std::vector<int> block_waiters;
  std::vector<int> warp_live;
  std::vector<std::vector<int>> warp_waiters;
  // Lane exchange: two slots per thread, used alternately (xgen counts a
  // thread's exchanges), so one warp barrier per exchange suffices: a lane
  // can only overwrite a slot after every lane passed the next exchange's
  // barrier, i.e. after they all read it.
  std::vector<uint64_t> xchg;  // (2, threads)
  std::vector<uint32_t> xgen;  // (threads)
  std::vector<int> run;        // run queue (LIFO; order does not matter)
  // ASan: the scheduler's own stack.
  void* fake_stack = nullptr;
  const void* sched_bottom = nullptr;
  size_t sched_size = 0;
};

thread_local Scheduler* tl_sched = nullptr;

Scheduler& Sched() {
  thread_local std::unique_ptr<Scheduler> s;
  if (!s) {
    s = std::make_unique<Scheduler>();
    tl_sched = s.get();
  }
  return *s;
}

void FiberMain();

// Scheduler -> fiber `id`; returns when the fiber parks.
void Resume(Scheduler& s, int id) {
  Fiber& f = *s.fibers[id];
  s.current = id;
  tl_thread = &f.t;
#if PG_EMU_ASAN
  __sanitizer_start_switch_fiber(&s.fake_stack, f.stack.get(), kStackBytes);
#endif
  if (!f.started) {
    f.started = true;
    s.starting = id;
  }
  SwitchContext(&s.home, &f.ctx);
#if PG_EMU_ASAN
  __sanitizer_finish_switch_fiber(s.fake_stack, nullptr, nullptr);
#endif
  s.current = -1;
}

// Fiber `id` -> scheduler; returns when the scheduler resumes it.
void Park(Scheduler& s, int id) {
  Fiber& f = *s.fibers[id];
#if PG_EMU_ASAN
  __sanitizer_start_switch_fiber(&f.fake_stack, s.sched_bottom, s.sched_size);
#endif
  SwitchContext(&f.ctx, &s.home);
#if PG_EMU_ASAN
  __sanitizer_finish_switch_fiber(f.fake_stack, &s.sched_bottom, &s.sched_size);
#endif
}

void Release(Scheduler& s, std::vector<int>& waiters) {
  for (int id : waiters) s.run.push_back(id);
  waiters.clear();
}

// The thread `id` exits: it no longer holds back any barrier.
void Exit(Scheduler& s, int id) {
  Fiber& f = *s.fibers[id];
  f.done = true;
  --s.live;
  if (!s.block_waiters.empty() && static_cast<int>(s.block_waiters.size()) == s.live) Release(s, s.block_waiters);
  const int w = f.t.warp;
  --s.warp_live[w];
  auto& ww = s.warp_waiters[w];
  if (!ww.empty() && static_cast<int>(ww.size()) == s.warp_live[w]) Release(s, ww);
}

void FiberMain() {
  Scheduler& s = *tl_sched;
  const int id = s.starting;
#if PG_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &s.sched_bottom, &s.sched_size);
#endif
  for (;;) {
    s.body(s.ctx);
    Exit(s, id);
    Park(s, id);
  }
}

void EnsureFibers(Scheduler& s, int n) {
  while (static_cast<int>(s.fibers.size()) < n) {
    auto f = std::make_unique<Fiber>();
    f->stack.reset(new unsigned char[kStackBytes]);
    MakeContext(&f->ctx, f->stack.get(), kStackBytes, FiberMain);
    s.fibers.push_back(std::move(f));
  }
}

void RunBlock(Scheduler& s) {
  const dim3 bd = s.block.block_dim;
  const int ws = s.block.warp_size;
  const int n_warps = (s.n + ws - 1) / ws;
  s.live = s.n;
  s.block_waiters.clear();
  s.warp_live.assign(n_warps, 0);
  s.warp_waiters.resize(n_warps);
  for (auto& w : s.warp_waiters) w.clear();
  s.run.clear();
  s.xgen.assign(s.n, 0);
  for (int i = s.n - 1; i >= 0; --i) {
    Fiber& f = *s.fibers[i];
    f.done = false;
    f.t.thread_idx = dim3(i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y));
    f.t.linear = i;
    f.t.lane = i % ws;
    f.t.warp = i / ws;
    ++s.warp_live[f.t.warp];
    s.run.push_back(i);
  }
  while (!s.run.empty()) {
    const int id = s.run.back();
    s.run.pop_back();
    Resume(s, id);
  }
  if (s.live != 0) {
    std::fprintf(stderr,
                 "gpu emulator: kernel %s deadlocked in block (%u,%u,%u): %d threads wait at a barrier "
                 "that the others never reach\n",
                 s.name, s.block.block_idx.x, s.block.block_idx.y, s.block.block_idx.z, s.live);
    std::abort();
  }
}

}  // namespace

void SetWarpSize(int w) {
  PG_CHECK_MSG(w >= 1 && w <= 64 && (w & (w - 1)) == 0, "warp size must be a power of two in [1, 64]");
  g_warp_size = w;
}
int WarpSize() { return g_warp_size; }

void SyncThreads() {
  Scheduler& s = *tl_sched;
  const int id = s.current;
  s.block_waiters.push_back(id);
  if (static_cast<int>(s.block_waiters.size()) == s.live) {
    s.block_waiters.pop_back();  // the last to arrive carries on
    Release(s, s.block_waiters);
    return;
  }
  Park(s, id);
}

void SyncWarp() {
  Scheduler& s = *tl_sched;
  const int id = s.current;
  const int w = s.fibers[id]->t.warp;
  auto& ww = s.warp_waiters[w];
  ww.push_back(id);
  if (static_cast<int>(ww.size()) == s.warp_live[w]) {
    ww.pop_back();
    Release(s, ww);
    return;
  }
  Park(s, id);
}

namespace {
// Publishes `mine` in this thread's current slot and meets the warp; returns
// the slot array every lane of this exchange wrote to, and in *gen this
// exchange's number: lane l took part iff xgen[l] > *gen (a lane that exited
// before it never counted it; one that went on is at most one further).
const uint64_t* Publish(Scheduler& s, const ThreadCtx& t, uint64_t mine, uint32_t* gen) {
  *gen = s.xgen[t.linear]++;
  uint64_t* slots = s.xchg.data() + size_t(*gen & 1) * size_t(s.n);
  slots[t.linear] = mine;
  SyncWarp();
  return slots;
}
}  // namespace

uint64_t WarpExchange(uint64_t mine, int src) {
  Scheduler& s = *tl_sched;
  const ThreadCtx& t = s.fibers[s.current]->t;
  uint32_t gen;
  const uint64_t* slots = Publish(s, t, mine, &gen);
  const int from = t.warp * s.block.warp_size + src;
  const bool valid = from < s.n && s.xgen[from] > gen;
  return valid ? slots[from] : mine;
}

uint64_t WarpBallot(bool pred) {
  Scheduler& s = *tl_sched;
  const ThreadCtx& t = s.fibers[s.current]->t;
  uint32_t gen;
  const uint64_t* slots = Publish(s, t, pred ? 1 : 0, &gen);
  const int base = t.warp * s.block.warp_size;
  uint64_t bits = 0;
  for (int l = 0; l < s.block.warp_size && base + l < s.n; ++l) {
    if (s.xgen[base + l] > gen && slots[base + l]) bits |= uint64_t{1} << l;
  }
  return bits;
}

gpuError_t RunGrid(dim3 grid, dim3 block, size_t smem, gpuStream_t, void (*body)(void*), void* ctx,
                   const char* kernel_name) {
  const uint64_t n = uint64_t(block.x) * block.y * block.z;
  if (n == 0 || n > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 || smem > 228 * 1024) {
    SetLastError(gpuErrorInvalidValue, kernel_name);
    return gpuErrorInvalidValue;
  }
  Scheduler& s = Sched();
  PG_CHECK_MSG(s.current < 0, "gpu emulator: a kernel may not launch another");
  EnsureFibers(s, static_cast<int>(n));
  std::vector<unsigned char> dyn(smem);
  s.n = static_cast<int>(n);
  s.body = body;
  s.ctx = ctx;
  s.name = kernel_name;
  s.xchg.assign(2 * n, 0);
  s.block.block_dim = block;
  s.block.grid_dim = grid;
  s.block.warp_size = g_warp_size;
  s.block.dynamic_smem = dyn.data();
  tl_block = &s.block;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        s.block.block_idx = dim3(x, y, z);
        if (smem) std::memset(dyn.data(), 0xff, smem);
        RunBlock(s);
      }
    }
  }
  tl_block = nullptr;
  tl_thread = nullptr;
  return gpuSuccess;
}

}  // namespace pg::gpu::emu
