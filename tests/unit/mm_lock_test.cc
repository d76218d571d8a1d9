// MemoryManager's mlock bookkeeping: lock flags split VMAs at the range's edges, a hole ends
// the range with ENOMEM after the part before it is done, locked pages are counted once,
// MCL_FUTURE and MAP_LOCKED apply to new mappings, and a fork keeps none of it.
#include <sys/mman.h>

#include "gtest/gtest.h"
#include "sentry/mm/memory_manager.h"

namespace sentry::mm {
namespace {

// Accepts every change and maps nothing: only the VMA list is under test.
class AcceptAll final : public platform::AddressSpace {
 public:
  size_t ReadMemory(GuestAddr, std::span<uint8_t>) override { return 0; }
  size_t WriteMemory(GuestAddr, std::span<const uint8_t>) override { return 0; }
  Result<uint64_t> Map(platform::Context&, GuestAddr addr, uint64_t, int, int, int,
                       uint64_t) override {
    return addr.value();
  }
  Result<void> Unmap(platform::Context&, GuestAddr, uint64_t) override { return Ok(); }
  Result<void> Protect(platform::Context&, GuestAddr, uint64_t, int) override { return Ok(); }
  Result<uint64_t> Remap(platform::Context&, GuestAddr, uint64_t, uint64_t, int,
                         GuestAddr new_addr) override {
    return new_addr.value();
  }
  Result<void> Advise(platform::Context&, GuestAddr, uint64_t, int) override { return Ok(); }
  const std::vector<std::pair<uint64_t, uint64_t>>& Reserved() const override { return none_; }
  uint64_t VdsoBase() const override { return 0; }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> none_;
};

class NoContext final : public platform::Context {
 public:
  platform::Trap Switch(platform::Registers&) override { return {}; }
  void Interrupt() override {}
  Result<std::vector<uint8_t>> GetFpState() override { return std::vector<uint8_t>(); }
  Result<void> SetFpState(std::span<const uint8_t>) override { return Ok(); }
  Result<int> CloneThread() override { return Errno(ENOSYS); }
  Result<int> ForkAddressSpace() override { return Errno(ENOSYS); }
  std::shared_ptr<platform::AddressSpace> address_space() override { return nullptr; }
  void Kill() override {}
  int host_tid() const override { return 0; }
};

constexpr uint64_t kBase = 0x100000000;
constexpr uint64_t kPage = kPageSize;

class LockTest : public ::testing::Test {
 protected:
  void MapAt(uint64_t addr, uint64_t pages, int extra_flags = 0) {
    ASSERT_TRUE(mm.MapAnonymous(ctx, addr, pages * kPage, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_FIXED | extra_flags)
                    .ok());
  }
  size_t VmaCount() {
    std::string maps = mm.Maps();
    return static_cast<size_t>(std::count(maps.begin(), maps.end(), '\n'));
  }

  NoContext ctx;
  MemoryManager mm{std::make_shared<AcceptAll>()};
};

TEST_F(LockTest, SplitsAtTheEdgesAndCountsOnce) {
  MapAt(kBase, 8);
  ASSERT_TRUE(mm.SetLock(kBase + 2 * kPage, 3 * kPage, kLocked).ok());
  EXPECT_EQ(mm.LockedPages(), 3u);
  EXPECT_EQ(VmaCount(), 3u);
  EXPECT_EQ(mm.LockedPages(kBase, 3 * kPage), 1u);
  ASSERT_TRUE(mm.SetLock(kBase, 8 * kPage, kLocked).ok());
  EXPECT_EQ(mm.LockedPages(), 8u);
  ASSERT_TRUE(mm.SetLock(kBase + kPage, kPage, 0).ok());
  EXPECT_EQ(mm.LockedPages(), 7u);
  EXPECT_EQ(mm.MemoryUsage().locked, 7u);
}

TEST_F(LockTest, HoleLocksThePrefixThenFails) {
  MapAt(kBase, 2);
  MapAt(kBase + 3 * kPage, 2);
  Result<void> r = mm.SetLock(kBase, 5 * kPage, kLocked);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
  EXPECT_EQ(mm.LockedPages(), 2u);
  r = mm.SetLock(kBase + 2 * kPage, kPage, kLocked);  // nothing mapped at the start
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(mm.LockedPages(), 2u);
  EXPECT_TRUE(mm.SetLock(kBase, 0, kLocked).ok());
  EXPECT_EQ(mm.SetLock(~uint64_t{0} - kPage + 1, 2 * kPage, kLocked).error().code(), EINVAL);
}

TEST_F(LockTest, UnmapAndProtectKeepTheCount) {
  MapAt(kBase, 4);
  ASSERT_TRUE(mm.SetLock(kBase, 4 * kPage, kLocked).ok());
  ASSERT_TRUE(mm.Protect(ctx, kBase + kPage, kPage, PROT_READ).ok());
  EXPECT_EQ(mm.LockedPages(), 4u);
  ASSERT_TRUE(mm.Unmap(ctx, kBase + 3 * kPage, kPage).ok());
  EXPECT_EQ(mm.LockedPages(), 3u);
}

TEST_F(LockTest, FutureLocksAndMapLocked) {
  mm.SetLockAll(std::nullopt, kLocked | kLockOnFault);
  MapAt(kBase, 2);
  EXPECT_EQ(mm.LockedPages(), 2u);
  mm.SetLockAll(uint8_t{0}, 0);
  EXPECT_EQ(mm.LockedPages(), 0u);
  MapAt(kBase + 4 * kPage, 1, MAP_LOCKED);
  EXPECT_EQ(mm.LockedPages(), 1u);
  mm.SetLockAll(uint8_t{kLocked}, 0);
  EXPECT_EQ(mm.LockedPages(), 3u);
}

TEST_F(LockTest, ForkKeepsNoLocks) {
  MapAt(kBase, 2);
  ASSERT_TRUE(mm.SetLock(kBase, 2 * kPage, kLocked).ok());
  mm.SetLockAll(std::nullopt, kLocked);
  std::shared_ptr<MemoryManager> child = mm.Fork(std::make_shared<AcceptAll>());
  EXPECT_EQ(child->LockedPages(), 0u);
  EXPECT_EQ(child->future_lock(), 0);
  EXPECT_EQ(mm.LockedPages(), 2u);
}

}  // namespace
}  // namespace sentry::mm
