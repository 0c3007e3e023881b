// CpuFeatures: what the host x86-64 CPU can execute, detected once, and the
// instruction-set level (IsaLevel) the CPU kernels run at.
//
// The active level is the best level the host supports, unless the
// environment variable PROSGROW_ISA=scalar|avx2|avx512 forces a lower one
// (tests and benchmarks use this). Asking for a level the host cannot run
// logs a warning and falls back to the best supported level.
//
// Thread-safety: detection runs once (function-local static); afterwards
// every accessor is a read of immutable data.
#pragma once

namespace pg {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
};

// Kernel levels, in increasing order of capability.
//   kScalar: portable C++ (the reference every SIMD kernel is tested against)
//   kAvx2  : AVX2 + FMA + F16C
//   kAvx512: AVX-512 F/BW/VL/DQ + VNNI (+ BF16 where present)
enum class IsaLevel { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* IsaName(IsaLevel level);

// The host's features (cpuid + xgetbv, checking the OS saves the registers).
const CpuFeatures& HostCpuFeatures();

// Whether the host can run kernels of `level`.
bool HostSupports(IsaLevel level);

// The best level the host supports.
IsaLevel BestHostIsa();

// The level in use: BestHostIsa(), or PROSGROW_ISA when set and supported.
IsaLevel ActiveIsa();

}  // namespace pg
