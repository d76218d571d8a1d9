// MemoryManager tells a mapped object's MappingObserver about every VMA that maps it: the
// attachment count (shm_nattch) System V shared memory reports, over splits, forks and shmdt.
#include <sys/mman.h>

#include "gtest/gtest.h"
#include "sentry/mm/memory_manager.h"
#include "tests/unit/null_platform.h"

namespace sentry::mm {
namespace {

struct Counter final : MappingObserver {
  int opened = 0, closed = 0;
  uint64_t size = 0;
  void Opened() override { opened++; }
  void Closed() override { closed++; }
  uint64_t DetachSize() const override { return size; }
  int live() const { return opened - closed; }
};

class ObserverTest : public ::testing::Test {
 protected:
  uint64_t MapShared(MemoryManager& mm, uint64_t addr, uint64_t len) {
    MapSource source{1, 2, true, obj};
    int flags = MAP_SHARED | (addr ? MAP_FIXED : 0);
    auto r = mm.Map(ctx, addr, len, PROT_READ | PROT_WRITE, flags, "/SYSV", 3, 0, &source);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : 0;
  }

  NullContext ctx;
  std::shared_ptr<Counter> obj = std::make_shared<Counter>();
  std::shared_ptr<MemoryManager> mm =
      std::make_shared<MemoryManager>(std::make_shared<NullAddressSpace>());
};

TEST_F(ObserverTest, MapUnmapCountsOnce) {
  obj->size = 3 * kPageSize;
  uint64_t at = MapShared(*mm, 0, obj->size);
  EXPECT_EQ(obj->opened, 1);  // no transient copies
  EXPECT_EQ(obj->closed, 0);
  ASSERT_TRUE(mm->Unmap(ctx, at, obj->size).ok());
  EXPECT_EQ(obj->live(), 0);
  EXPECT_EQ(obj->closed, 1);
}

TEST_F(ObserverTest, SplitsForkAndDetach) {
  obj->size = 4 * kPageSize;
  uint64_t at = MapShared(*mm, 0, obj->size);
  // A hole in the middle: two VMAs map it now, as Linux counts.
  ASSERT_TRUE(mm->Unmap(ctx, at + kPageSize, kPageSize).ok());
  EXPECT_EQ(obj->live(), 2);
  ASSERT_TRUE(mm->Protect(ctx, at + 2 * kPageSize, kPageSize, PROT_READ).ok());
  EXPECT_EQ(obj->live(), 3);
  auto child = mm->Fork(std::make_shared<NullAddressSpace>());
  EXPECT_EQ(obj->live(), 6);
  child.reset();  // exit
  EXPECT_EQ(obj->live(), 3);
  EXPECT_EQ(mm->DetachShared(ctx, at + kPageSize).error(), EINVAL);  // not a start
  ASSERT_TRUE(mm->DetachShared(ctx, at).ok());  // every piece of the attachment
  EXPECT_EQ(obj->live(), 0);
  EXPECT_EQ(mm->DetachShared(ctx, at).error(), EINVAL);
}

TEST_F(ObserverTest, DetachLeavesOtherAttachments) {
  obj->size = kPageSize;
  uint64_t a = MapShared(*mm, 0, obj->size);
  uint64_t b = MapShared(*mm, 0, obj->size);
  ASSERT_NE(a, b);
  EXPECT_EQ(obj->live(), 2);
  ASSERT_TRUE(mm->DetachShared(ctx, b).ok());
  EXPECT_EQ(obj->live(), 1);
  mm.reset();  // exec or exit drops the rest
  EXPECT_EQ(obj->live(), 0);
}

}  // namespace
}  // namespace sentry::mm
