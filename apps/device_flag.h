// --device cpu|cuda[:N] (serve, generate, doctor, bench-model): which
// executor runs the forward pass. Only the CPU executor exists yet (the GPU
// kernels of src/gpu are built and tested, the device executor behind the
// forward seam is not), so `cuda` is parsed and refused with one line.
#pragma once

#include <string>

#include "base/cli_util.h"
#include "base/status.h"

namespace pg {

void AddDeviceFlag(CLI::App& app, std::string* device);

// Ok for "cpu"; a one-line InvalidArgument for anything else: "cuda" / "cuda:N"
// (no device executor yet) or a malformed value.
Status CheckDeviceFlag(const std::string& device);

}  // namespace pg
