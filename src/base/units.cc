#include "base/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pg {

Result<uint64_t> ParseByteSize(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return InvalidArgument("invalid size '" + text + "': expected a number such as 512MiB");
  std::string num = text.substr(0, i);
  std::string unit = text.substr(i);
  char* end = nullptr;
  double v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(v) || v < 0)
    return InvalidArgument("invalid size '" + text + "'");
  double mul = 1;
  if (unit.empty() || unit == "B")
    mul = 1;
  else if (unit == "KiB" || unit == "K" || unit == "k")
    mul = 1024.0;
  else if (unit == "MiB" || unit == "M")
    mul = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    mul = 1024.0 * 1024 * 1024;
  else if (unit == "TiB" || unit == "T")
    mul = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    mul = 1e3;
  else if (unit == "MB")
    mul = 1e6;
  else if (unit == "GB")
    mul = 1e9;
  else if (unit == "TB")
    mul = 1e12;
  else
    return InvalidArgument("invalid size unit '" + unit + "' in '" + text + "' (use B, KiB, MiB, GiB, TiB)");
  double bytes = v * mul;
  if (bytes > 4.6e18) return InvalidArgument("size '" + text + "' is too large");
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace pg
