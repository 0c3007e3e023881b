// The device executor as an engine choice: --device cuda[:N] in a build with
// a GPU backend (-DPROSGROW_GPU=cuda|hip|emulated) sets the EngineConfig's
// executor factory (DeviceExecutor) and its device-tier arena
// (DeviceBlockArena, device memory), so the forward pass and the KV cache's
// device tier both live on the device.
#pragma once

#include "base/status.h"
#include "engine/engine_config.h"

namespace pg::gpu {

// Fails in one line when the build's runtime sees no device or `device` is
// not one of them; otherwise sets c->make_executor and c->kv_device_arena.
Status UseDeviceExecutor(int device, EngineConfig* c);

}  // namespace pg::gpu
