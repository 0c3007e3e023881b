#include "doctor/host_checks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/cpu_kernels.h"
#include "base/units.h"

namespace pg {
namespace fs = std::filesystem;

CheckResult CheckCpu() {
  const CpuFeatures& f = HostCpuFeatures();
  std::string flags;
  auto add = [&](bool on, const char* name) {
    if (on) flags += flags.empty() ? name : fmt::format(" {}", name);
  };
  add(f.avx2, "avx2");
  add(f.fma, "fma");
  add(f.f16c, "f16c");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512dq, "avx512dq");
  add(f.avx512vnni, "avx512vnni");
  add(f.avx512bf16, "avx512bf16");
  const CpuKernels& k = ActiveKernels();
  IsaLevel best = BestHostIsa();
  std::string detail = fmt::format("features [{}]; kernels {} (K-quant x8 repack {}, f16 half4 repack {})",
                                   flags.empty() ? "none" : flags, IsaName(k.level), k.k_quant_x8 ? "on" : "off",
                                   k.half4_f16 ? "on" : "off");
  if (k.level < best) {
    return CheckResult::Warn("cpu", detail + fmt::format("; the CPU supports {}", IsaName(best)),
                             "unset PROSGROW_ISA (it forces the lower kernel level)");
  }
  if (k.level == IsaLevel::kScalar) {
    return CheckResult::Warn("cpu", detail, "use a CPU with AVX2 (the scalar kernels are several times slower)");
  }
  return CheckResult::Ok("cpu", detail);
}

bool ReadMeminfo(uint64_t* mem_total, uint64_t* mem_available) {
  std::ifstream in("/proc/meminfo");
  if (!in) return false;
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  bool total = false, avail = false;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemTotal:") *mem_total = kib * 1024, total = true;
    if (key == "MemAvailable:") *mem_available = kib * 1024, avail = true;
  }
  return total && avail;
}

CheckResult CheckMemory(const MemoryPlan& p, uint64_t mem_total, uint64_t mem_available) {
  uint64_t need = p.model_bytes + p.kv_device_bytes + p.kv_host_bytes;
  std::string detail =
      fmt::format("model {} + device tier {} + host tier {} = {}; MemTotal {}, MemAvailable {}",
                  FormatBytes(p.model_bytes), FormatBytes(p.kv_device_bytes), FormatBytes(p.kv_host_bytes),
                  FormatBytes(need), FormatBytes(mem_total), FormatBytes(mem_available));
  if (need > mem_total) {
    return CheckResult::Fail("memory", detail,
                             "lower --kv-host-mem / --kv-device-mem (or use a smaller model) to fit MemTotal");
  }
  if (need > mem_available) {
    return CheckResult::Warn("memory", detail,
                             "free memory or lower --kv-host-mem / --kv-device-mem: the tiers would swap or be "
                             "killed under pressure");
  }
  return CheckResult::Ok("memory", detail);
}

namespace {

// Files and bytes directly or indirectly under `dir` (errors skipped), and
// how many of those files and directories others (group or world) may read.
void DirUsage(const fs::path& dir, uint64_t* files, uint64_t* bytes, uint64_t* open_to_others) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    const fs::perms p = it->symlink_status(fec).permissions();
    if (!fec && (p & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none) ++*open_to_others;
    if (it->is_regular_file(fec)) {
      ++*files;
      *bytes += it->file_size(fec);
    }
  }
}

// Writes, syncs and removes a probe file; "" on success, else the error.
std::string ProbeWrite(const fs::path& dir) {
  fs::path probe = dir / fmt::format(".prosgrow-doctor-probe-{}", getpid());
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return std::strerror(errno);
  const char data[4096] = {};
  bool ok = write(fd, data, sizeof data) == static_cast<ssize_t>(sizeof data) && fsync(fd) == 0;
  std::string err = ok ? "" : std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return err;
}

}  // namespace

CheckResult CheckDiskTier(const std::string& dir, uint64_t cap_bytes) {
  const char* name = "disk tier";
  if (dir.empty()) return CheckResult::Skip(name, "no --kv-disk-dir");
  std::error_code ec;
  // Created as serve creates it: each missing directory owner-only (its files hold prompt tokens).
  fs::path prefix;
  for (const fs::path& part : fs::path(dir)) {
    prefix /= part;
    if (ec || fs::exists(prefix, ec)) continue;
    if (fs::create_directory(prefix, ec)) fs::permissions(prefix, fs::perms::owner_all, ec);
  }
  if (ec || !fs::is_directory(dir)) {
    return CheckResult::Fail(name, fmt::format("{} cannot be created: {}", dir, ec ? ec.message() : "not a directory"),
                             "point --kv-disk-dir at a writable directory");
  }
  if (std::string err = ProbeWrite(dir); !err.empty()) {
    return CheckResult::Fail(name, fmt::format("{} is not writable: {}", dir, err),
                             "fix the directory's permissions or choose another --kv-disk-dir");
  }
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0) {
    return CheckResult::Fail(name, fmt::format("statvfs({}): {}", dir, std::strerror(errno)),
                             "choose another --kv-disk-dir");
  }
  uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  uint64_t files = 0, used = 0, open_to_others = 0;
  DirUsage(dir, &files, &used, &open_to_others);
  std::string detail = fmt::format("{} writable; cap {}, free {}; holds {} files ({})", dir, FormatBytes(cap_bytes),
                                   FormatBytes(free_bytes), files, FormatBytes(used));
  const fs::perms mode = fs::status(dir, ec).permissions();
  if (!ec && (mode & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none) {
    return CheckResult::Warn(
        name, fmt::format("{} is readable by others (mode {:04o}); {}", dir, static_cast<int>(mode), detail),
        fmt::format("chmod -R go-rwx {}: its block files hold prompt token ids (prosgrow "
                    "creates the tier's directories 0700 and files 0600)",
                    dir));
  }
  if (open_to_others > 0) {
    return CheckResult::Warn(
        name, fmt::format("{} files or directories under {} are readable by others; {}", open_to_others, dir, detail),
        fmt::format("chmod -R go-rwx {}: block files hold prompt token ids", dir));
  }
  // Blocks already in the directory are the tier's own (they count against
  // the cap, not against the free space it still needs).
  if (free_bytes + used < cap_bytes) {
    return CheckResult::Warn(name, detail,
                             "lower --kv-disk-size to the free space, or free disk space: the tier stops "
                             "writing when the disk fills");
  }
  return CheckResult::Ok(name, detail);
}

}  // namespace pg
