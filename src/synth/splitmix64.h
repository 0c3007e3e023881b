// SplitMix64: a counter-based 64-bit mixer and the small sequential
// generator built on it. Used for everything make-model randomizes, so that
// outputs depend only on seeds and indices, never on threading or platform.
//
// Thread-safety: Mix64/HashName are pure; a SplitMix64 object is not shared.
#pragma once

#include <cstdint>
#include <string_view>

namespace pg {

// The SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection on 64 bits.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a of a name, mixed with a seed: a per-tensor stream key.
inline uint64_t HashName(std::string_view name, uint64_t seed) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  return Mix64(h ^ Mix64(seed));
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return Mix64(state_);
  }
  // Uniform in [0, n) (n > 0); the modulo bias is irrelevant at these sizes.
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }

 private:
  uint64_t state_;
};

}  // namespace pg
