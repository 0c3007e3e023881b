// What the GPU backend compiled into this binary can see: the backend's name
// and its devices (name, memory, driver and runtime versions). `prosgrow
// doctor` reports it. In a build without a GPU backend (PROSGROW_GPU=off)
// QueryGpus says so and lists no device; it never fails.
//
// Thread-safety: QueryGpus may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pg {

struct GpuDevice {
  int index = 0;
  std::string name;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  int warp_size = 0;
  std::string arch;  // e.g. "sm_90"; "" for the emulator
};

struct GpuReport {
  std::string backend;          // "off", "cuda", "hip" or "emulated"
  std::string driver_version;   // "" when there is no driver
  std::string runtime_version;  // the runtime the binary was built against
  std::string error;            // why no device was found ("" when devices were)
  std::vector<GpuDevice> devices;
};

// The compiled GPU backend: "off", "cuda", "hip" or "emulated".
const char* CompiledGpuBackend();

GpuReport QueryGpus();

}  // namespace pg
