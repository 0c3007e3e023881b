// The device executor as an engine choice: --device cuda[:N] in a build with
// a GPU backend (-DPROSGROW_GPU=cuda|hip|emulated) sets the EngineConfig's
// executor factory (DeviceExecutor), its device-tier arena (DeviceBlockArena,
// device memory) and the host tier's memory (PinnedHostMemory), so the forward
// pass and the KV cache's device tier both live on the device and the host
// tier is pinned.
#pragma once

#include "base/status.h"
#include "engine/engine_config.h"

namespace pg::gpu {

// Fails in one line when the build's runtime sees no device or `device` is
// not one of them; otherwise sets c->make_executor, c->kv_device_arena and
// c->kv_host_memory.
Status UseDeviceExecutor(int device, EngineConfig* c);

}  // namespace pg::gpu
