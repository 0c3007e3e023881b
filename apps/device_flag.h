// --device cpu|cuda[:N] (serve, generate, doctor, bench-model): which
// executor runs the forward pass. serve, generate (ToEngineConfig) and
// bench-model run `cuda` on the device executor (src/gpu/executor) in a build
// with a GPU backend (-DPROSGROW_GPU=cuda|hip|emulated) and a device.
#pragma once

#include <string>

#include "base/cli_util.h"
#include "base/status.h"
#include "engine/engine_config.h"

namespace pg {

void AddDeviceFlag(CLI::App& app, std::string* device);

// serve / generate / bench-model: "cpu" leaves c as it is; "cuda[:N]" makes the engine run
// the device executor with the KV device tier in device memory, or fails in
// one line (no GPU backend in this build, no device, N out of range).
Status ApplyDeviceFlag(const std::string& device, EngineConfig* c);

}  // namespace pg
