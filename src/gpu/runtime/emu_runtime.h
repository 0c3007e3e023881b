// The GPU emulator: what gpu_vendor.h maps the gpu* names and the kernel
// language onto under PROSGROW_GPU_EMULATED, so the kernel sources of
// src/gpu/kernels compile as C++ and run on the CPU (docs/gpu.md).
//
// Execution model. A launch runs its blocks one after another on the calling
// OS thread. A block's threads are fibers (emu_fiber.cc) switched only at
// barriers: __syncthreads() waits for every live thread of the block,
// PgSyncWarp() and every lane exchange (shuffle, ballot) for the live threads
// of the warp. A barrier nobody can complete (a divergent __syncthreads) is a
// fatal error naming the kernel, not a hang. The warp width is a runtime
// value (SetWarpSize: 32 by default; the op tests also run 64, the CDNA width).
//
// Shared memory: `__shared__` is `static thread_local`, so one array exists
// per OS thread and every fiber of the running block sees it; dynamic shared
// memory (PgDynamicShared) is the launch's `smem` bytes, filled with 0xff
// before each block so a read before a write shows up as NaN / garbage.
//
// Memory. gpuMalloc returns memory from the emulator's device allocator,
// tracked by range; gpuMallocHost pinned host memory, tracked too. Copies
// check their kind against the pointers (a host pointer given as device
// memory, or the reverse, is gpuErrorInvalidValue), and a launch checks that
// every pointer argument is device memory.
//
// Streams and events (emu_stream.cc) are honest about asynchrony: a copy or
// memset queued with gpu*Async on a created stream does NOT happen at call
// time but when the stream is ordered: gpuStreamSynchronize, gpuEventSynchronize
// (or a gpuEventQuery that answered gpuErrorNotReady once) on an event recorded
// after it, gpuStreamWaitEvent on such an event, gpuDeviceSynchronize,
// gpuStreamDestroy, or a kernel launch on that stream (which first runs the
// stream's queue). So a host read of a copy's target, or a host write to its
// source, without a wait shows up as wrong bytes. The default stream (null)
// runs its work at call time and does not order the created streams (they
// behave as gpuStreamNonBlocking ones); kernels run at launch.
//
// Thread-safety: host calls may come from any thread (the allocator is
// locked); each OS thread runs its own launches with its own fibers.
#pragma once

#include <math.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- The kernel language -------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define PG_GLOBAL
#define PG_DEVICE inline
#define PG_HOST_DEVICE inline
#define PG_ARCH_SM80 0

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace pg::gpu::emu {

// The running thread of a block (a fiber).
struct ThreadCtx {
  dim3 thread_idx;
  int linear = 0;  // threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
  int lane = 0;    // linear % warp size
  int warp = 0;    // linear / warp size
};
// The running block.
struct BlockCtx {
  dim3 block_idx, block_dim, grid_dim;
  unsigned char* dynamic_smem = nullptr;
  int warp_size = 32;
};
extern constinit thread_local const ThreadCtx* tl_thread;
extern constinit thread_local const BlockCtx* tl_block;

void SyncThreads();
void SyncWarp();
// Lane exchange: every live lane of the warp passes `mine`; returns the value
// of lane `src` (its own when src is outside the warp's live lanes).
uint64_t WarpExchange(uint64_t mine, int src);
// Bit l set when lane l passed true.
uint64_t WarpBallot(bool pred);

// Warp width of later launches (a power of two, 1..64). Default 32.
void SetWarpSize(int w);
int WarpSize();

}  // namespace pg::gpu::emu

#define threadIdx (::pg::gpu::emu::tl_thread->thread_idx)
#define blockIdx (::pg::gpu::emu::tl_block->block_idx)
#define blockDim (::pg::gpu::emu::tl_block->block_dim)
#define gridDim (::pg::gpu::emu::tl_block->grid_dim)
inline void __syncthreads() { ::pg::gpu::emu::SyncThreads(); }

inline int PgWarpSize() { return ::pg::gpu::emu::tl_block->warp_size; }
inline int PgLaneId() { return ::pg::gpu::emu::tl_thread->lane; }
inline void PgSyncWarp() { ::pg::gpu::emu::SyncWarp(); }
template <typename T>
inline T PgShfl(T v, int src_lane) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  const int w = PgWarpSize();
  bits = ::pg::gpu::emu::WarpExchange(bits, ((src_lane % w) + w) % w);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
template <typename T>
inline T PgShflXor(T v, int lane_mask) {
  return PgShfl(v, PgLaneId() ^ lane_mask);
}
template <typename T>
inline T PgShflDown(T v, int delta) {
  const int src = PgLaneId() + delta;
  T other = PgShfl(v, src < PgWarpSize() ? src : PgLaneId());
  return other;
}
inline uint64_t PgBallot(bool pred) { return ::pg::gpu::emu::WarpBallot(pred); }
inline bool PgAny(bool pred) { return PgBallot(pred) != 0; }
inline bool PgAll(bool pred) {
  // Every live lane voted true: the ballot equals the ballot of `true`.
  const uint64_t votes = PgBallot(pred);
  return votes == PgBallot(true);
}
template <typename T>
inline T* PgDynamicShared() {
  return reinterpret_cast<T*>(::pg::gpu::emu::tl_block->dynamic_smem);
}
inline float PgBitsToFloat(uint32_t u) { return std::bit_cast<float>(u); }
inline uint32_t PgFloatToBits(float f) { return std::bit_cast<uint32_t>(f); }

// Atomics (fibers of one OS thread never interleave inside one; the builtins
// keep them atomic across host threads too). Return the old value.
template <typename T>
inline T atomicAdd(T* p, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T next = old + v;
    while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) next = old + v;
    return old;
  } else {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  }
}
template <typename T>
inline T atomicMax(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <typename T>
inline T atomicCAS(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
template <typename T>
inline T atomicExch(T* p, T v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}

// ---- The runtime API -----------------------------------------------------
enum gpuError_t {
  gpuSuccess = 0,
  gpuErrorInvalidValue = 1,
  gpuErrorMemoryAllocation = 2,
  gpuErrorInvalidDevice = 101,
  gpuErrorNotReady = 600,
  gpuErrorLaunchFailure = 719,
};
enum gpuMemcpyKind {
  gpuMemcpyHostToHost = 0,
  gpuMemcpyHostToDevice = 1,
  gpuMemcpyDeviceToHost = 2,
  gpuMemcpyDeviceToDevice = 3,
  gpuMemcpyDefault = 4,
};
struct gpuDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int multiProcessorCount;
  int warpSize;
  int major, minor;
};
namespace pg::gpu::emu {
struct Stream;
struct Event;
}  // namespace pg::gpu::emu
using gpuStream_t = ::pg::gpu::emu::Stream*;
using gpuEvent_t = ::pg::gpu::emu::Event*;

const char* gpuGetErrorString(gpuError_t e);
gpuError_t gpuGetLastError();  // returns and clears the sticky error
gpuError_t gpuGetDeviceCount(int* n);
gpuError_t gpuSetDevice(int device);
gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int device);
gpuError_t gpuDriverGetVersion(int* v);
gpuError_t gpuRuntimeGetVersion(int* v);
gpuError_t gpuMemGetInfo(size_t* free_bytes, size_t* total_bytes);
gpuError_t gpuDeviceSynchronize();
gpuError_t gpuMalloc(void** p, size_t bytes);
template <typename T>
inline gpuError_t gpuMalloc(T** p, size_t bytes) {
  return gpuMalloc(reinterpret_cast<void**>(p), bytes);
}
gpuError_t gpuFree(void* p);
gpuError_t gpuMallocHost(void** p, size_t bytes);
template <typename T>
inline gpuError_t gpuMallocHost(T** p, size_t bytes) {
  return gpuMallocHost(reinterpret_cast<void**>(p), bytes);
}
gpuError_t gpuFreeHost(void* p);
gpuError_t gpuMemcpy(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind);
gpuError_t gpuMemcpyAsync(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind, gpuStream_t s = nullptr);
gpuError_t gpuMemset(void* p, int value, size_t bytes);
gpuError_t gpuMemsetAsync(void* p, int value, size_t bytes, gpuStream_t s = nullptr);
constexpr unsigned gpuStreamNonBlocking = 1;
gpuError_t gpuStreamCreate(gpuStream_t* s);
gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned flags);
gpuError_t gpuStreamDestroy(gpuStream_t s);
gpuError_t gpuStreamSynchronize(gpuStream_t s);
gpuError_t gpuStreamWaitEvent(gpuStream_t s, gpuEvent_t e, unsigned flags = 0);
gpuError_t gpuEventCreate(gpuEvent_t* e);
gpuError_t gpuEventDestroy(gpuEvent_t e);
gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t s = nullptr);
gpuError_t gpuEventSynchronize(gpuEvent_t e);
gpuError_t gpuEventQuery(gpuEvent_t e);
gpuError_t gpuEventElapsedTime(float* ms, gpuEvent_t start, gpuEvent_t end);

namespace pg::gpu::emu {

// Whether [p, p + bytes) lies inside one live gpuMalloc allocation.
bool IsDeviceRange(const void* p, size_t bytes);
// Records `e` as the sticky error (first one wins until gpuGetLastError).
void SetLastError(gpuError_t e, const char* what);
// Whether dst / src lie in the memory `kind` names (and are not null).
bool CopyKindMatches(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind);
// Runs the work queued on stream s (null: nothing), before a launch on it.
void RunQueued(gpuStream_t s);

// Runs body(ctx) once per thread of every block of the grid (fibers).
// `kernel_name` names the kernel in fatal barrier errors.
gpuError_t RunGrid(dim3 grid, dim3 block, size_t smem, gpuStream_t s, void (*body)(void*), void* ctx,
                   const char* kernel_name);

template <typename P>
inline bool DeviceArgOk(const P& p) {
  if constexpr (std::is_pointer_v<P>) {
    return p == nullptr || IsDeviceRange(p, 0);
  } else {
    return true;
  }
}

template <typename... P, typename... A>
void LaunchKernel(void (*k)(P...), const char* name, dim3 grid, dim3 block, size_t smem, gpuStream_t s, A&&... a) {
  using Params = std::tuple<std::decay_t<P>...>;
  struct Call {
    void (*k)(P...);
    Params params;
  } call{k, Params(static_cast<std::decay_t<P>>(std::forward<A>(a))...)};
  const bool ok = std::apply([](const auto&... p) { return (DeviceArgOk(p) && ...); }, call.params);
  if (!ok) {
    SetLastError(gpuErrorInvalidValue, name);
    return;
  }
  RunQueued(s);
  RunGrid(
      grid, block, smem, s,
      [](void* c) {
        Call* call = static_cast<Call*>(c);
        std::apply(call->k, call->params);
      },
      &call, name);
}

}  // namespace pg::gpu::emu

#define PG_LAUNCH(kernel, grid, block, smem, stream, ...) \
  ::pg::gpu::emu::LaunchKernel(kernel, #kernel, (grid), (block), (smem), (stream), __VA_ARGS__)
