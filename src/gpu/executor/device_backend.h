// The device backend (engine/backend.h): --device cuda[:N] in a build with a
// GPU backend (-DPROSGROW_GPU=cuda|hip|emulated). Its executor is the
// DeviceExecutor, its device-tier arena a DeviceBlockArena in device memory
// and its host memory pinned (PinnedHostMemory), so the forward pass and the
// KV cache's device tier both live on the device and the host tier is pinned.
#pragma once

#include <memory>

#include "base/status.h"
#include "engine/backend.h"
#include "engine/engine_config.h"
#include "gpu/executor/device_options.h"

namespace pg::gpu {

// The backend of device o.device with options o. Fails in one line when the
// build's runtime sees no device or o.device is not one of them.
Result<std::shared_ptr<const Backend>> MakeDeviceBackend(const DeviceOptions& o);

// c->backend = MakeDeviceBackend(o).
Status UseDeviceExecutor(const DeviceOptions& o, EngineConfig* c);

}  // namespace pg::gpu
