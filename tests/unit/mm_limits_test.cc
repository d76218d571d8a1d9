// MemoryManager's RLIMIT_AS and RLIMIT_DATA checks (VmLimits), as Linux's may_expand_vm: every
// mapping counts toward the address space, private writable non-stack ones toward data; past
// a limit mmap, mremap and mprotect fail with ENOMEM and brk stays put, changing nothing.
#include <sys/mman.h>

#include "gtest/gtest.h"
#include "sentry/mm/memory_manager.h"
#include "tests/unit/null_platform.h"

namespace sentry::mm {
namespace {

constexpr int kRw = PROT_READ | PROT_WRITE;
constexpr int kPrivate = MAP_PRIVATE | MAP_ANONYMOUS;
constexpr uint64_t kBrkStart = 0x10000000;

class LimitsTest : public ::testing::Test {
 protected:
  Result<uint64_t> Map(uint64_t pages, int prot, int flags, const VmLimits& limits,
                       uint64_t addr = 0, std::string name = "") {
    return mm_.Map(ctx_, addr, pages * kPageSize, prot, flags | MAP_NORESERVE, std::move(name), -1,
                   0, nullptr, limits);
  }
  static VmLimits As(uint64_t pages) { return {.as = pages * kPageSize}; }
  static VmLimits Data(uint64_t pages) { return {.data = pages * kPageSize}; }

  NullContext ctx_;
  MemoryManager mm_{std::make_shared<NullAddressSpace>()};
};

TEST_F(LimitsTest, AddressSpaceCountsEveryMapping) {
  ASSERT_TRUE(Map(4, PROT_NONE, kPrivate, As(10)).ok());
  ASSERT_TRUE(Map(4, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, As(10)).ok());
  auto r = Map(3, PROT_NONE, kPrivate, As(10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
  EXPECT_EQ(mm_.MemoryUsage().size, 8u) << "a refused mapping is not recorded";
  EXPECT_TRUE(Map(2, PROT_NONE, kPrivate, As(10)).ok());
  EXPECT_TRUE(Map(100, PROT_NONE, kPrivate, {}).ok()) << "the default limits nothing";
}

TEST_F(LimitsTest, MapFixedCountsOnlyWhatItAdds) {
  uint64_t at = *Map(8, kRw, kPrivate, {});
  EXPECT_TRUE(Map(8, PROT_READ, kPrivate | MAP_FIXED, As(8), at).ok());
  auto r = Map(8, PROT_READ, kPrivate | MAP_FIXED, As(8), at + 4 * kPageSize);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
}

TEST_F(LimitsTest, DataIsPrivateWritableButNotStacks) {
  ASSERT_TRUE(Map(4, kRw, kPrivate, Data(6)).ok());
  EXPECT_FALSE(Map(4, kRw, kPrivate, Data(6)).ok());
  EXPECT_TRUE(Map(16, PROT_READ, kPrivate, Data(6)).ok());
  EXPECT_TRUE(Map(16, kRw, MAP_SHARED | MAP_ANONYMOUS, Data(6)).ok());
  EXPECT_TRUE(Map(16, kRw, kPrivate | MAP_GROWSDOWN, Data(6)).ok());
  EXPECT_TRUE(Map(16, kRw, kPrivate, Data(6), 0, "[stack]").ok());
  MemoryManager::Usage u = mm_.MemoryUsage();
  EXPECT_EQ(u.data, 4u);
  EXPECT_EQ(u.stack, 32u);
  // Valgrind's allowance: a soft limit of 0 lets data grow up to the hard limit.
  EXPECT_TRUE(Map(2, kRw, kPrivate, {.data = 0, .data_max = 6 * kPageSize}).ok());
  EXPECT_FALSE(Map(1, kRw, kPrivate, {.data = 0, .data_max = 6 * kPageSize}).ok());
}

TEST_F(LimitsTest, MprotectToWritableChecksData) {
  uint64_t at = *Map(8, PROT_READ, kPrivate, {});
  auto r = mm_.Protect(ctx_, at, 8 * kPageSize, kRw, Data(4));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
  EXPECT_EQ(mm_.VmaAt(at)->prot, PROT_READ);
  ASSERT_TRUE(mm_.Protect(ctx_, at, 4 * kPageSize, kRw, Data(4)).ok());
  // Already data: changing it again adds nothing; the address-space limit plays no part.
  EXPECT_TRUE(mm_.Protect(ctx_, at, 4 * kPageSize, kRw | PROT_EXEC, As(1)).ok());
}

TEST_F(LimitsTest, MremapGrowthAndFixedTarget) {
  constexpr uint64_t kOther = 0x20000000;
  uint64_t at = *Map(4, kRw, kPrivate, {});
  ASSERT_TRUE(Map(4, PROT_NONE, kPrivate | MAP_FIXED, {}, kOther).ok());
  auto r = mm_.Remap(ctx_, at, 4 * kPageSize, 8 * kPageSize, MREMAP_MAYMOVE, 0, As(10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
  r = mm_.Remap(ctx_, at, 4 * kPageSize, 6 * kPageSize, MREMAP_MAYMOVE, 0, As(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(mm_.MemoryUsage().size, 10u);
  // Onto the other mapping with MREMAP_FIXED: its 4 pages go first, so 6 -> 8 fits in 10.
  auto moved = mm_.Remap(ctx_, *r, 6 * kPageSize, 8 * kPageSize, MREMAP_MAYMOVE | MREMAP_FIXED,
                         kOther, As(10));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, kOther);
  EXPECT_EQ(mm_.MemoryUsage().size, 8u);
  EXPECT_TRUE(mm_.Remap(ctx_, kOther, 8 * kPageSize, 2 * kPageSize, 0, 0, As(1)).ok())
      << "shrinking always works";
}

TEST_F(LimitsTest, BrkStaysPutPastLimits) {
  mm_.SetBrkStart(kBrkStart);
  EXPECT_EQ(*mm_.Brk(ctx_, kBrkStart + 8 * kPageSize, Data(4)), kBrkStart);
  EXPECT_EQ(*mm_.Brk(ctx_, kBrkStart + 8 * kPageSize, As(4)), kBrkStart);
  EXPECT_EQ(*mm_.Brk(ctx_, kBrkStart + 4 * kPageSize, Data(4)), kBrkStart + 4 * kPageSize);
  EXPECT_EQ(mm_.MemoryUsage().data, 4u);
  EXPECT_EQ(*mm_.Brk(ctx_, kBrkStart + 5 * kPageSize, Data(4)), kBrkStart + 4 * kPageSize);
  EXPECT_EQ(*mm_.Brk(ctx_, kBrkStart, Data(0)), kBrkStart) << "shrinking always works";
}

}  // namespace
}  // namespace sentry::mm
