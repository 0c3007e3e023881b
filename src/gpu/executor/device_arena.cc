#include "gpu/executor/device_arena.h"

#include <fmt/format.h>

#include "base/check.h"

namespace pg::gpu {
namespace {

struct LiveArenas {
  std::mutex mu;
  std::vector<std::pair<const uint8_t*, size_t>> ranges;  // base, bytes
};
LiveArenas& Live() {
  static LiveArenas* l = new LiveArenas();
  return *l;
}

}  // namespace

Result<std::unique_ptr<DeviceBlockArena>> DeviceBlockArena::Create(int64_t n_blocks, size_t block_bytes, int device) {
  if (n_blocks < 0 || block_bytes == 0) return InvalidArgument("device arena: bad size");
  if (gpuSetDevice(device) != gpuSuccess) {
    (void)gpuGetLastError();
    return InvalidArgument(fmt::format("device KV tier: no GPU device {}", device));
  }
  const size_t stride = (block_bytes + 255) / 256 * 256;
  const size_t bytes = std::max<size_t>(static_cast<size_t>(n_blocks) * stride, 256);
  void* p = nullptr;
  if (gpuError_t e = gpuMalloc(&p, bytes); e != gpuSuccess) {
    (void)gpuGetLastError();
    return ResourceExhausted(fmt::format("device KV tier: gpuMalloc of {:.1f} MiB failed ({}); lower --kv-device-mem",
                                         static_cast<double>(bytes) / (1 << 20), gpuGetErrorString(e)));
  }
  gpuStream_t copies = nullptr;
  if (gpuError_t e = gpuStreamCreateWithFlags(&copies, gpuStreamNonBlocking); e != gpuSuccess) {
    (void)gpuGetLastError();
    (void)gpuFree(p);
    return Internal(fmt::format("device KV tier: no copy stream ({})", gpuGetErrorString(e)));
  }
  {
    std::lock_guard<std::mutex> lock(Live().mu);
    Live().ranges.emplace_back(static_cast<const uint8_t*>(p), bytes);
  }
  return std::unique_ptr<DeviceBlockArena>(
      new DeviceBlockArena(n_blocks, block_bytes, static_cast<uint8_t*>(p), stride, device, copies));
}

DeviceBlockArena::~DeviceBlockArena() {
  {
    std::lock_guard<std::mutex> lock(Live().mu);
    auto& r = Live().ranges;
    for (size_t i = 0; i < r.size(); ++i)
      if (r[i].first == base_) {
        r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
  (void)gpuSetDevice(device_);
  (void)gpuStreamSynchronize(copies_);
  (void)gpuStreamDestroy(copies_);
  for (gpuEvent_t e : events_) (void)gpuEventDestroy(e);
  (void)gpuFree(base_);
}

uint8_t* DeviceBlockArena::BlockPtr(int64_t slot) {
  PG_CHECK(slot >= 0 && slot < n_blocks());
  return base_ + static_cast<size_t>(slot) * stride_;
}

void DeviceBlockArena::CopyIn(int64_t slot, const uint8_t* src) {
  const Status st = CopyInAsync(slot, src).Wait();
  PG_CHECK_MSG(st.ok(), st.ToString().c_str());
}

void DeviceBlockArena::CopyOut(int64_t slot, uint8_t* dst) {
  const Status st = CopyOutAsync(slot, dst).Wait();
  PG_CHECK_MSG(st.ok(), st.ToString().c_str());
}

CopyDone DeviceBlockArena::CopyInAsync(int64_t slot, const uint8_t* src) {
  (void)gpuSetDevice(device_);  // per host thread: the cache's mover threads copy too
  return Fence(gpuMemcpyAsync(BlockPtr(slot), src, block_bytes(), gpuMemcpyHostToDevice, copies_), "copy into a block");
}

CopyDone DeviceBlockArena::CopyOutAsync(int64_t slot, uint8_t* dst) {
  (void)gpuSetDevice(device_);
  return Fence(gpuMemcpyAsync(dst, BlockPtr(slot), block_bytes(), gpuMemcpyDeviceToHost, copies_),
               "copy out of a block");
}

CopyDone DeviceBlockArena::Fence(gpuError_t queued, const char* what) {
  gpuEvent_t ev = queued == gpuSuccess ? TakeEvent() : nullptr;
  gpuError_t e = ev ? gpuEventRecord(ev, copies_) : queued != gpuSuccess ? queued : gpuErrorInvalidValue;
  if (e != gpuSuccess) {
    (void)gpuGetLastError();
    if (ev) GiveEvent(ev);
    return CopyDone(
        [e, what] { return Internal(fmt::format("device KV tier: {} failed ({})", what, gpuGetErrorString(e))); });
  }
  return CopyDone([this, ev, what]() -> Status {
    const gpuError_t done = gpuEventSynchronize(ev);
    GiveEvent(ev);
    if (done == gpuSuccess) return Status::Ok();
    (void)gpuGetLastError();
    return Internal(fmt::format("device KV tier: {} failed ({})", what, gpuGetErrorString(done)));
  });
}

gpuEvent_t DeviceBlockArena::TakeEvent() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!events_.empty()) {
      gpuEvent_t e = events_.back();
      events_.pop_back();
      return e;
    }
  }
  gpuEvent_t e = nullptr;
  return gpuEventCreate(&e) == gpuSuccess ? e : nullptr;
}

void DeviceBlockArena::GiveEvent(gpuEvent_t e) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(e);
}

std::function<Result<std::unique_ptr<BlockArena>>(int64_t, size_t)> DeviceBlockArena::Factory(int device) {
  return [device](int64_t n_blocks, size_t block_bytes) -> Result<std::unique_ptr<BlockArena>> {
    PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBlockArena> a, Create(n_blocks, block_bytes, device));
    return std::unique_ptr<BlockArena>(std::move(a));
  };
}

bool DeviceBlockArena::Contains(const uint8_t* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(Live().mu);
  for (const auto& [base, n] : Live().ranges)
    if (p >= base && bytes <= n && p - base <= static_cast<std::ptrdiff_t>(n - bytes)) return true;
  return false;
}

}  // namespace pg::gpu
