// The device executor as an engine choice: --device cuda[:N] in a build with
// a GPU backend (-DPROSGROW_GPU=cuda|hip|emulated) sets the EngineConfig's
// executor factory (DeviceExecutor), its device-tier arena (DeviceBlockArena,
// device memory) and the host tier's memory (PinnedHostMemory), so the forward
// pass and the KV cache's device tier both live on the device and the host
// tier is pinned.
#pragma once

#include "base/status.h"
#include "engine/engine_config.h"
#include "gpu/executor/device_options.h"

namespace pg::gpu {

// Fails in one line when the build's runtime sees no device or o.device is
// not one of them; otherwise sets c->make_executor (a DeviceExecutor made
// with o), c->kv_device_arena and c->kv_host_memory.
Status UseDeviceExecutor(const DeviceOptions& o, EngineConfig* c);

}  // namespace pg::gpu
