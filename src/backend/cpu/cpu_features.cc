#include "backend/cpu/cpu_features.h"

#include <cpuid.h>

#include <cstdlib>
#include <optional>

#include "base/enum_names.h"
#include "base/log.h"

namespace pg {
namespace {

constexpr const char* kIsaNames[] = {"scalar", "avx2", "avx512"};  // by IsaLevel

uint64_t ReadXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures Detect() {
  CpuFeatures f;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = (ecx >> 27) & 1;
  const bool avx = (ecx >> 28) & 1;
  f.fma = (ecx >> 12) & 1;
  f.f16c = (ecx >> 29) & 1;
  if (!osxsave || !avx) return CpuFeatures{};
  const uint64_t xcr0 = ReadXcr0();
  const bool ymm_saved = (xcr0 & 0x6) == 0x6;
  const bool zmm_saved = (xcr0 & 0xe6) == 0xe6;
  if (!ymm_saved) return CpuFeatures{};
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  f.avx2 = (ebx >> 5) & 1;
  if (zmm_saved) {
    f.avx512f = (ebx >> 16) & 1;
    f.avx512dq = (ebx >> 17) & 1;
    f.avx512bw = (ebx >> 30) & 1;
    f.avx512vl = (ebx >> 31) & 1;
    f.avx512vnni = (ecx >> 11) & 1;
    unsigned a1, b1, c1, d1;
    if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) f.avx512bf16 = (a1 >> 5) & 1;
  }
  return f;
}

IsaLevel ResolveActive() {
  const IsaLevel best = BestHostIsa();
  const char* env = std::getenv("PROSGROW_ISA");
  if (env == nullptr || *env == '\0') return best;
  const std::optional<IsaLevel> want = EnumFromName<IsaLevel>(env, kIsaNames);
  if (!want) {
    PG_LOG_WARN("PROSGROW_ISA={} is not one of scalar|avx2|avx512; using {}", env, IsaName(best));
    return best;
  }
  if (!HostSupports(*want)) {
    PG_LOG_WARN("PROSGROW_ISA={}: this CPU cannot run it; using {}", env, IsaName(best));
    return best;
  }
  return *want;
}

}  // namespace

const char* IsaName(IsaLevel level) { return EnumName(level, kIsaNames); }

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures f = Detect();
  return f;
}

bool HostSupports(IsaLevel level) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (level) {
    case IsaLevel::kScalar: return true;
    case IsaLevel::kAvx2: return f.avx2 && f.fma && f.f16c;
    case IsaLevel::kAvx512:
      return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
  }
  return false;
}

IsaLevel BestHostIsa() {
  if (HostSupports(IsaLevel::kAvx512)) return IsaLevel::kAvx512;
  if (HostSupports(IsaLevel::kAvx2)) return IsaLevel::kAvx2;
  return IsaLevel::kScalar;
}

IsaLevel ActiveIsa() {
  static const IsaLevel level = ResolveActive();
  return level;
}

}  // namespace pg
