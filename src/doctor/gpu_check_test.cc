#include "doctor/gpu_check.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(GpuCheck, NoBackendIsOneSkipLineNamingTheBackends) {
  GpuReport r;
  r.backend = "off";
  const CheckResult c = CheckGpus(r);
  EXPECT_EQ(c.verdict, CheckResult::Verdict::kSkip);
  EXPECT_NE(FormatCheck(c).find("gpu: no GPU backend compiled (backends: cpu;"), std::string::npos) << FormatCheck(c);
  EXPECT_EQ(FormatCheck(c).find('\n'), std::string::npos);
}

TEST(GpuCheck, ABackendWithoutDeviceSaysSoWithItsVersions) {
  GpuReport r;
  r.backend = "cuda";
  r.runtime_version = "13.0";
  r.error = "no CUDA-capable device is detected";
  const CheckResult c = CheckGpus(r);
  EXPECT_EQ(c.verdict, CheckResult::Verdict::kSkip);
  EXPECT_EQ(c.detail, "no GPU found (backends: cpu, cuda; runtime 13.0; no CUDA-capable device is detected)");
}

TEST(GpuCheck, DevicesAreListedWithMemoryAndVersions) {
  GpuReport r;
  r.backend = "cuda";
  r.runtime_version = "13.0";
  r.driver_version = "13.0";
  r.devices.push_back({0, "NVIDIA H200", uint64_t{140} << 30, uint64_t{139} << 30, 32, "sm_90"});
  r.devices.push_back({1, "NVIDIA H200", uint64_t{140} << 30, uint64_t{100} << 30, 32, "sm_90"});
  const CheckResult c = CheckGpus(r);
  EXPECT_EQ(c.verdict, CheckResult::Verdict::kOk);
  EXPECT_NE(c.detail.find("2 GPUs (backends: cpu, cuda; driver 13.0, runtime 13.0): 0: NVIDIA H200 sm_90"),
            std::string::npos)
      << c.detail;
  EXPECT_NE(c.detail.find("; 1: NVIDIA H200"), std::string::npos);
}

}  // namespace
}  // namespace pg
