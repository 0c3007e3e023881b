// Parsing and printing of human sizes ("512MiB", "4GiB", "1.5GB", "1048576").
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace pg {

// Accepts an integer or decimal number followed by an optional unit:
// B, KiB/MiB/GiB/TiB (powers of 1024), KB/MB/GB/TB and K/M/G/T (powers of 1000
// for the *B forms, 1024 for bare K/M/G/T as in common CLI usage).
// Rejects negatives, garbage and values past 2^62.
Result<uint64_t> ParseByteSize(const std::string& text);

// "1.50 GiB" style.
std::string FormatBytes(uint64_t bytes);

}  // namespace pg
