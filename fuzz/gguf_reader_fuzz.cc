// libFuzzer target for the GGUF reader: parse arbitrary bytes, and when they
// parse, touch everything the accessors expose (as a loader would), so that a
// header the reader accepted but described wrongly shows up under ASan.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = pg::GgufFile::FromBuffer(data, size, "fuzz");
  if (!r.ok()) {
    // Errors are one line.
    if (r.status().message().find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  const pg::GgufFile& f = **r;
  uint64_t sink = 0;
  for (const auto& [key, value] : f.metadata()) {
    sink += key.size() + value.array_size();
    (void)f.GetString(key);
    (void)f.GetInt(key);
    (void)f.GetFloat(key);
    (void)f.GetStringArray(key);
    (void)f.GetIntArray(key);
    (void)f.GetFloatArray(key);
  }
  for (const auto& t : f.tensors()) {
    if (f.FindTensor(t.name) != &t) __builtin_trap();
    sink += static_cast<uint64_t>(t.n_elements()) + static_cast<uint64_t>(t.rows());
    // Every byte the descriptor claims must be readable.
    if (t.n_bytes > 0) sink += t.data[0] + t.data[t.n_bytes - 1];
  }
  // Keep the reads from being optimized away.
  asm volatile("" : : "r"(sink) : "memory");
  return 0;
}
