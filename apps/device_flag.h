// --device cpu|cuda[:N] and --device-prefill f32|bf16 (serve, generate,
// bench-model): which executor runs the forward pass, and how the device
// executor runs a prefill's dense products. serve, generate (ToEngineConfig)
// and bench-model run `cuda` on the device executor (src/gpu/executor) in a
// build with a GPU backend (-DPROSGROW_GPU=cuda|hip|emulated) and a device.
#pragma once

#include <string>

#include "base/cli_util.h"
#include "base/status.h"
#include "engine/engine_config.h"

namespace pg {

struct DeviceFlags {
  std::string device = "cpu";
  // f32: every product in the device's own kernels (f32 activations, the
  // same bits for any batch shape); bf16: steps of 32 tokens or more run
  // their dense products as bf16 GEMMs (cuBLAS in the CUDA build).
  std::string prefill = "f32";
};

void AddDeviceFlags(CLI::App& app, DeviceFlags* f);

// "cpu" leaves c as it is; "cuda[:N]" makes the engine run the device
// executor with the KV device tier in device memory, or fails in one line
// (no GPU backend in this build, no device, N out of range, --device-prefill
// bf16 with --device cpu).
Status ApplyDeviceFlags(const DeviceFlags& f, EngineConfig* c);

}  // namespace pg
