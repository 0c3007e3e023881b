// libFuzzer target for the safetensors header reader (hf/safetensors_file.h):
// parse arbitrary bytes, and when they parse, touch every byte range the
// header claims, so a header the reader accepted but described wrongly shows
// up under ASan.
#include <cstddef>
#include <cstdint>

#include "hf/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = pg::SafetensorsFile::FromBuffer(data, size, "fuzz");
  if (!r.ok()) {
    if (r.status().message().find('\n') != std::string::npos) __builtin_trap();  // errors are one line
    return 0;
  }
  const pg::SafetensorsFile& f = **r;
  uint64_t sink = 0;
  for (const auto& t : f.tensors()) {
    if (f.Find(t.name) != &t) __builtin_trap();
    if (t.n_bytes != static_cast<uint64_t>(t.n_elements()) * pg::SafeDtypeBytes(t.dtype)) __builtin_trap();
    if (t.n_bytes > 0) sink += t.data[0] + t.data[t.n_bytes - 1];
  }
  for (const auto& [k, v] : f.metadata()) sink += k.size() + v.size();
  asm volatile("" : : "r"(sink) : "memory");
  return 0;
}
