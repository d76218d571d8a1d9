// MemoryManager's mlock bookkeeping: lock flags split VMAs at the range's edges, a hole ends
// the range with ENOMEM after the part before it is done, locked pages are counted once,
// MCL_FUTURE and MAP_LOCKED apply to new mappings, and a fork keeps none of it.
#include <sys/mman.h>

#include "gtest/gtest.h"
#include "sentry/mm/memory_manager.h"
#include "tests/unit/null_platform.h"

namespace sentry::mm {
namespace {

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

  NullContext ctx;
  MemoryManager mm{std::make_shared<NullAddressSpace>()};
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
  std::shared_ptr<MemoryManager> child = mm.Fork(std::make_shared<NullAddressSpace>());
  EXPECT_EQ(child->LockedPages(), 0u);
  EXPECT_EQ(child->future_lock(), 0);
  EXPECT_EQ(mm.LockedPages(), 2u);
}

}  // namespace
}  // namespace sentry::mm
