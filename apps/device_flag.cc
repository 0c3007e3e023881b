#include "device_flag.h"

#include <fmt/format.h>

#include <cctype>

#include "gpu/device_info.h"
#ifdef PROSGROW_DEVICE_EXECUTOR
#include "gpu/executor/device_backend.h"
#endif

namespace pg {
namespace {

// -1: not cuda[:N]; else the device ordinal (0 for plain "cuda").
int CudaOrdinal(const std::string& device) {
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) != 0 || device.size() <= 5 || device.size() > 9) return -1;
  for (size_t i = 5; i < device.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(device[i]))) return -1;
  return std::stoi(device.substr(5));
}

}  // namespace

void AddDeviceFlags(CLI::App& app, DeviceFlags* f) {
  app.add_option("--device", f->device,
                 "executor of the forward pass: cpu (default) | cuda[:N] (the device executor; needs a build with "
                 "-DPROSGROW_GPU=cuda|hip|emulated and a device)");
  app.add_option("--device-prefill", f->prefill,
                 "--device cuda's prefill products: f32 (default; the device's own kernels, f32 activations, the "
                 "same bits for any batch shape) | bf16 (steps of 32+ tokens run their dense products as bf16 "
                 "GEMMs, cuBLAS in a CUDA build: faster, but a prefilled prefix and the same prefix decoded give "
                 "slightly different K/V) | fp8 (as bf16, but the products of FP8 weights take FP8 activations, "
                 "E4M3 per token and 128-wide group, through cuBLASLt's FP8 tensor cores where the GPU has them)")
      ->check(CLI::IsMember({"f32", "bf16", "fp8"}));
}

Status ApplyDeviceFlags(const DeviceFlags& f, EngineConfig* c) {
  const std::string& device = f.device;
  if (device == "cpu") {
    if (f.prefill != "f32") return InvalidArgument("--device-prefill " + f.prefill + " applies to --device cuda only");
    return Status::Ok();
  }
  const int ordinal = CudaOrdinal(device);
  if (ordinal < 0) return InvalidArgument(fmt::format("--device: expected cpu, cuda or cuda:N (got '{}')", device));
#ifdef PROSGROW_DEVICE_EXECUTOR
  gpu::DeviceOptions o;
  o.device = ordinal;
  o.gemm_min_tokens = f.prefill == "f32" ? 0 : gpu::kBf16GemmMinTokens;
  o.fp8_gemm = f.prefill == "fp8";
  return gpu::UseDeviceExecutor(o, c);
#else
  (void)c;
  return InvalidArgument(
      fmt::format("--device {}: this build has no device executor (GPU backend compiled: {}); build "
                  "with -DPROSGROW_GPU=cuda, or use --device cpu",
                  device, CompiledGpuBackend()));
#endif
}

}  // namespace pg
