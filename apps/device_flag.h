// --device cpu|cuda[:N] (serve, generate, doctor, bench-model): which
// executor runs the forward pass. serve and generate (ToEngineConfig) run
// `cuda` on the device executor (src/gpu/executor) in a build with a GPU
// backend (-DPROSGROW_GPU=cuda|hip|emulated) and a device; bench-model
// parses `cuda` and refuses it with one line.
#pragma once

#include <string>

#include "base/cli_util.h"
#include "base/status.h"
#include "engine/engine_config.h"

namespace pg {

void AddDeviceFlag(CLI::App& app, std::string* device);

// Ok for "cpu"; a one-line InvalidArgument for anything else: "cuda" / "cuda:N"
// (bench-model has no device executor) or a malformed value.
Status CheckDeviceFlag(const std::string& device);

// serve / generate: "cpu" leaves c as it is; "cuda[:N]" makes the engine run
// the device executor with the KV device tier in device memory, or fails in
// one line (no GPU backend in this build, no device, N out of range).
Status ApplyDeviceFlag(const std::string& device, EngineConfig* c);

}  // namespace pg
