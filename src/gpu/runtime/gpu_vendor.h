// The one vendor header of the GPU backend: kernel and host sources include
// this and nothing vendor-specific, so one source builds three ways
// (PROSGROW_GPU, set by CMake):
//
//   PROSGROW_GPU_CUDA      nvcc; gpu* names are the cuda* / cublas* ones
//   PROSGROW_GPU_HIP       hipcc; gpu* names are the hip* ones (no BLAS: Debian
//                          has no hipBLAS, so GemmBf16 uses our own kernel)
//   PROSGROW_GPU_EMULATED  a C++ compiler; gpu* names are the CPU emulator's
//                          (runtime/emu_runtime.h), kernels run as fibers
//
// Device-side portability rules (docs/gpu.md):
//   - the warp width is a value, PgWarpSize() (32 on NVIDIA, 64 on CDNA,
//     settable in the emulator), never a literal 32;
//   - lane exchange goes through PgShflXor / PgShflDown / PgShfl and votes
//     through PgBallot / PgAny / PgAll (64-bit masks);
//   - kernels are launched with PG_LAUNCH (the <<< >>> syntax is not C++);
//   - shared memory: `__shared__` arrays of fixed size, or PgDynamicShared<T>()
//     for the launch's dynamic bytes;
//   - hardware paths (tensor-core MMA, cp.async) sit behind PG_ARCH_SM80 etc.
//     checks over a portable fallback.
#pragma once

#include <cstdint>

#if defined(PROSGROW_GPU_CUDA)
#include <cuda_runtime.h>
#define PG_GPU_VENDOR "cuda"
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuDeviceProp cudaDeviceProp
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuMemGetInfo cudaMemGetInfo
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemset cudaMemset
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemcpyHostToHost cudaMemcpyHostToHost
#define gpuStream_t cudaStream_t
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEvent_t cudaEvent_t
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuErrorNotReady cudaErrorNotReady
#elif defined(PROSGROW_GPU_HIP)
#include <hip/hip_runtime.h>
#define PG_GPU_VENDOR "hip"
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuDeviceProp hipDeviceProp_t
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuMemGetInfo hipMemGetInfo
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemset hipMemset
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemcpyHostToHost hipMemcpyHostToHost
#define gpuStream_t hipStream_t
#define gpuStreamCreate hipStreamCreate
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEvent_t hipEvent_t
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuErrorNotReady hipErrorNotReady
#elif defined(PROSGROW_GPU_EMULATED)
#include "gpu/runtime/emu_runtime.h"
#define PG_GPU_VENDOR "emulated"
#else
#error "gpu_vendor.h needs PROSGROW_GPU_CUDA, PROSGROW_GPU_HIP or PROSGROW_GPU_EMULATED"
#endif

// BLAS: cuBLAS in the CUDA build (PG_HAVE_BLAS); none for HIP on Debian
// (no hipBLAS package) nor in the emulator: GemmBf16 then runs our own kernel.
// cuBLASLt (PG_HAVE_BLASLT): the CUDA build's FP8 prefill GEMM
// (kernels/fp8_blaslt.cu, cublasLt* names: no other vendor has one here).
#if defined(PROSGROW_GPU_CUDA)
#define PG_HAVE_BLAS 1
#define PG_HAVE_BLASLT 1
#include <cublasLt.h>
#include <cublas_v2.h>
#define gpublasHandle_t cublasHandle_t
#define gpublasCreate cublasCreate
#define gpublasSetStream cublasSetStream
#define gpublasGemmEx cublasGemmEx
#define GPUBLAS_STATUS_SUCCESS CUBLAS_STATUS_SUCCESS
#define GPUBLAS_OP_T CUBLAS_OP_T
#define GPUBLAS_OP_N CUBLAS_OP_N
#define GPU_R_16BF CUDA_R_16BF
#define GPU_R_32F CUDA_R_32F
#define GPUBLAS_COMPUTE_32F CUBLAS_COMPUTE_32F
#define GPUBLAS_GEMM_DEFAULT CUBLAS_GEMM_DEFAULT
#define gpuErrorLaunchFailure cudaErrorLaunchFailure
#else
#define PG_HAVE_BLAS 0
#define PG_HAVE_BLASLT 0
#endif

// The warp width kernels will see, for host-side launch geometry.
inline int PgHostWarpSize() {
#if defined(PROSGROW_GPU_EMULATED)
  return ::pg::gpu::emu::WarpSize();
#elif defined(PROSGROW_GPU_HIP)
  static const int w = [] {
    int dev = 0;
    hipDeviceProp_t p;
    return hipGetDevice(&dev) == hipSuccess && hipGetDeviceProperties(&p, dev) == hipSuccess ? p.warpSize : 64;
  }();
  return w;
#else
  return 32;
#endif
}

// Device-side helpers: only where a device compiler reads this (host-only
// sources of the CUDA / HIP builds see the runtime API above and nothing else).
#if defined(__CUDACC__) || defined(__HIP__)
#define PG_GLOBAL __global__
#define PG_DEVICE __device__ __forceinline__
#define PG_HOST_DEVICE __host__ __device__ __forceinline__

// Warp width as a value: 32 on NVIDIA; HIP's warpSize (64 on gfx9/CDNA).
PG_DEVICE int PgWarpSize() {
#if defined(PROSGROW_GPU_HIP)
  return warpSize;
#else
  return 32;
#endif
}
PG_DEVICE int PgLaneId() { return static_cast<int>(threadIdx.x) % PgWarpSize(); }
// A warp intrinsic over the whole warp: HIP's form takes no lane mask, CUDA's
// is the op's _sync form with every lane's bit set.
#if defined(PROSGROW_GPU_HIP)
#define PG_WARP_OP(op, ...) op(__VA_ARGS__)
#else
#define PG_WARP_OP(op, ...) op##_sync(0xffffffffu, __VA_ARGS__)
#endif
template <typename T>
PG_DEVICE T PgShflXor(T v, int lane_mask) {
  return PG_WARP_OP(__shfl_xor, v, lane_mask);
}
template <typename T>
PG_DEVICE T PgShflDown(T v, int delta) {
  return PG_WARP_OP(__shfl_down, v, delta);
}
template <typename T>
PG_DEVICE T PgShfl(T v, int src_lane) {
  return PG_WARP_OP(__shfl, v, src_lane);
}
PG_DEVICE uint64_t PgBallot(bool pred) { return PG_WARP_OP(__ballot, pred); }
PG_DEVICE bool PgAny(bool pred) { return PgBallot(pred) != 0; }
PG_DEVICE bool PgAll(bool pred) {
  const int w = PgWarpSize();
  const uint64_t full = w == 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1);
  return PgBallot(pred) == full;
}
PG_DEVICE void PgSyncWarp() {
#if defined(PROSGROW_GPU_HIP)
  __builtin_amdgcn_wave_barrier();
#else
  __syncwarp();
#endif
}
// Dynamic shared memory of the launch (its `smem` bytes), as T*.
template <typename T>
PG_DEVICE T* PgDynamicShared() {
  extern __shared__ unsigned char pg_dynamic_smem[];
  return reinterpret_cast<T*>(pg_dynamic_smem);
}
PG_DEVICE float PgBitsToFloat(uint32_t u) { return __uint_as_float(u); }
PG_DEVICE uint32_t PgFloatToBits(float f) { return __float_as_uint(f); }

// Tensor-core and cp.async paths compile only where the architecture has them.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PG_ARCH_SM80 1
#else
#define PG_ARCH_SM80 0
#endif

// Launch: kernel<<<grid, block, smem, stream>>>(args) in both vendors' syntax.
#define PG_LAUNCH(kernel, grid, block, smem, stream, ...) (kernel)<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#elif !defined(PROSGROW_GPU_EMULATED)
// A host compiler reading a kernel header in the CUDA / HIP build: the
// host-device helpers (dequant.cuh, kv_pages.cuh) become plain inline code.
#include <cstring>
#define PG_DEVICE inline
#define PG_HOST_DEVICE inline
inline float PgBitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t PgFloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
#endif  // __CUDACC__ || __HIP__
