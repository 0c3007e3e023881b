#include "testing/guarded_block_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace pg::test {

Result<std::unique_ptr<GuardedBlockArena>> GuardedBlockArena::Create(int64_t n_blocks, size_t block_bytes) {
  if (n_blocks < 0 || block_bytes == 0) return InvalidArgument("guarded arena: bad geometry");
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const size_t stride = (block_bytes + page - 1) / page * page;
  const size_t mapped = std::max<size_t>(page, size_t(n_blocks) * stride);
  void* m = ::mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return ResourceExhausted("guarded arena: mmap failed");
  return std::unique_ptr<GuardedBlockArena>(
      new GuardedBlockArena(n_blocks, block_bytes, static_cast<uint8_t*>(m), stride, mapped));
}

std::function<Result<std::unique_ptr<BlockArena>>(int64_t, size_t)> GuardedBlockArena::Factory(
    GuardedBlockArena** made) {
  return [made](int64_t n_blocks, size_t block_bytes) -> Result<std::unique_ptr<BlockArena>> {
    PG_ASSIGN_OR_RETURN(auto arena, Create(n_blocks, block_bytes));
    if (made != nullptr) *made = arena.get();
    return std::unique_ptr<BlockArena>(std::move(arena));
  };
}

namespace {

class GuardedCpuBackend final : public pg::CpuBackend {
 public:
  explicit GuardedCpuBackend(GuardedBlockArena** made) : made_(made) {}
  Result<std::unique_ptr<BlockArena>> MakeDeviceArena(int64_t n_blocks, size_t block_bytes) const override {
    return GuardedBlockArena::Factory(made_)(n_blocks, block_bytes);
  }

 private:
  GuardedBlockArena** made_;
};

}  // namespace

std::shared_ptr<const Backend> GuardedBlockArena::CpuBackend(GuardedBlockArena** made) {
  return std::make_shared<GuardedCpuBackend>(made);
}

GuardedBlockArena::GuardedBlockArena(int64_t n_blocks, size_t block_bytes, uint8_t* base, size_t stride, size_t mapped)
    : BlockArena(n_blocks, block_bytes),
      base_(base),
      stride_(stride),
      mapped_(mapped),
      users_(size_t(n_blocks), 0),
      opened_(size_t(n_blocks), 0) {}

GuardedBlockArena::~GuardedBlockArena() { ::munmap(base_, mapped_); }

uint8_t* GuardedBlockArena::BlockPtr(int64_t slot) {
  PG_CHECK(slot >= 0 && slot < n_blocks());
  return base_ + size_t(slot) * stride_;
}

void GuardedBlockArena::Acquire(int64_t slot, bool kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (kernel) opened_[size_t(slot)]++;
  if (users_[size_t(slot)]++ == 0) PG_CHECK(::mprotect(BlockPtr(slot), stride_, PROT_READ | PROT_WRITE) == 0);
}

void GuardedBlockArena::Release(int64_t slot, bool kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (kernel) PG_CHECK_MSG(opened_[size_t(slot)]-- > 0, "guarded arena: CloseForKernels without Open");
  PG_CHECK(users_[size_t(slot)] > 0);
  if (--users_[size_t(slot)] == 0) PG_CHECK(::mprotect(BlockPtr(slot), stride_, PROT_NONE) == 0);
}

void GuardedBlockArena::CopyIn(int64_t slot, const uint8_t* src) {
  Acquire(slot, false);
  std::memcpy(BlockPtr(slot), src, block_bytes());
  Release(slot, false);
  copies_++;
}

void GuardedBlockArena::CopyOut(int64_t slot, uint8_t* dst) {
  Acquire(slot, false);
  std::memcpy(dst, BlockPtr(slot), block_bytes());
  Release(slot, false);
  copies_++;
}

void GuardedBlockArena::OpenForKernels(int64_t slot) { Acquire(slot, true); }
void GuardedBlockArena::CloseForKernels(int64_t slot) { Release(slot, true); }

int64_t GuardedBlockArena::open_slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (int32_t k : opened_) n += k > 0;
  return n;
}

}  // namespace pg::test
