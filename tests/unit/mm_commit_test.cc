// MemoryManager charges the guest's committed memory (sentry/base/guest_memory.h) as Linux's
// strict overcommit does: private writable mappings when mapped or made writable, given back
// when unmapped or when the mm goes; past the limit, ENOMEM and nothing charged.
#include <sys/mman.h>

#include "gtest/gtest.h"
#include "sentry/base/guest_memory.h"
#include "sentry/mm/memory_manager.h"
#include "tests/unit/null_platform.h"

namespace sentry::mm {
namespace {

constexpr int kRw = PROT_READ | PROT_WRITE;
constexpr int kPrivate = MAP_PRIVATE | MAP_ANONYMOUS;

class CommitTest : public ::testing::Test {
 protected:
  void TearDown() override {
    mm_.reset();
    GuestMemory::Global().SetLimitBytes(0);
    EXPECT_EQ(Charged(), 0u) << "the mm gave back all it took";
  }
  // Sets the limit `pages` above what is charged now (the counters are process-wide, and
  // other tests' files count too).
  static void LimitToMore(uint64_t pages) {
    GuestMemory& g = GuestMemory::Global();
    g.SetLimitBytes((g.committed_pages() + g.file_pages() + pages) * kPageSize);
  }
  // Pages charged since the test began.
  uint64_t Charged() const { return GuestMemory::Global().committed_pages() - base_; }
  uint64_t Map(uint64_t pages, int prot, int flags) {
    auto r = mm_->Map(ctx_, 0, pages * kPageSize, prot, flags, "", -1, 0);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : 0;
  }

  NullContext ctx_;
  uint64_t base_ = GuestMemory::Global().committed_pages();
  std::shared_ptr<MemoryManager> mm_ =
      std::make_shared<MemoryManager>(std::make_shared<NullAddressSpace>());
};

TEST_F(CommitTest, PrivateWritableCountsSharedReadOnlyAndNoreserveDoNot) {
  uint64_t rw = Map(4, kRw, kPrivate);
  EXPECT_EQ(Charged(), 4u);
  Map(8, PROT_READ, kPrivate);
  Map(8, kRw, MAP_SHARED | MAP_ANONYMOUS);
  Map(8, kRw, kPrivate | MAP_NORESERVE);
  EXPECT_EQ(Charged(), 4u);
  ASSERT_TRUE(mm_->Unmap(ctx_, rw + kPageSize, kPageSize).ok());
  EXPECT_EQ(Charged(), 3u);  // a hole in the middle gives back its page only
}

TEST_F(CommitTest, MprotectToWritableCharges) {
  uint64_t at = Map(8, PROT_NONE, kPrivate);
  EXPECT_EQ(Charged(), 0u);
  ASSERT_TRUE(mm_->Protect(ctx_, at + 2 * kPageSize, 3 * kPageSize, kRw).ok());
  EXPECT_EQ(Charged(), 3u);
  ASSERT_TRUE(mm_->Protect(ctx_, at, 8 * kPageSize, kRw).ok());
  EXPECT_EQ(Charged(), 8u);  // the pieces already charged are not charged twice
  ASSERT_TRUE(mm_->Protect(ctx_, at, 8 * kPageSize, PROT_READ).ok());
  EXPECT_EQ(Charged(), 8u);  // as Linux: read-only again keeps the charge
  uint64_t nores = Map(4, PROT_NONE, kPrivate | MAP_NORESERVE);
  ASSERT_TRUE(mm_->Protect(ctx_, nores, 4 * kPageSize, kRw).ok());
  EXPECT_EQ(Charged(), 8u);
}

TEST_F(CommitTest, PastTheLimitEnomemAndNothingCharged) {
  LimitToMore(10);
  Map(6, kRw, kPrivate);
  auto r = mm_->Map(ctx_, 0, 5 * kPageSize, kRw, kPrivate, "", -1, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOMEM);
  EXPECT_EQ(Charged(), 6u);
  uint64_t ro = Map(5, PROT_READ, kPrivate);
  auto p = mm_->Protect(ctx_, ro, 5 * kPageSize, kRw);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), ENOMEM);
  EXPECT_EQ(Charged(), 6u);
  Map(4, kRw, kPrivate);  // exactly to the limit
  EXPECT_EQ(Charged(), 10u);
}

TEST_F(CommitTest, BrkChargesAndGivesBack) {
  mm_->SetBrkStart(0x10000000);
  ASSERT_EQ(*mm_->Brk(ctx_, 0x10000000 + 5 * kPageSize), 0x10000000 + 5 * kPageSize);
  EXPECT_EQ(Charged(), 5u);
  ASSERT_EQ(*mm_->Brk(ctx_, 0x10000000 + 2 * kPageSize), 0x10000000 + 2 * kPageSize);
  EXPECT_EQ(Charged(), 2u);
  LimitToMore(1);
  // Past the limit brk fails as Linux's: the old break comes back.
  EXPECT_EQ(*mm_->Brk(ctx_, 0x10000000 + 9 * kPageSize), 0x10000000 + 2 * kPageSize);
  EXPECT_EQ(Charged(), 2u);
}

TEST_F(CommitTest, ForkChargesTheCopyAndExitGivesItBack) {
  Map(3, kRw, kPrivate);
  auto child = mm_->Fork(std::make_shared<NullAddressSpace>());
  EXPECT_EQ(Charged(), 6u);
  child.reset();
  EXPECT_EQ(Charged(), 3u);
}

TEST_F(CommitTest, MremapChargesTheNewSize) {
  uint64_t at = Map(4, kRw, kPrivate);
  auto grown = mm_->Remap(ctx_, at, 4 * kPageSize, 10 * kPageSize, MREMAP_MAYMOVE, 0);
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(Charged(), 10u);
  auto shrunk = mm_->Remap(ctx_, *grown, 10 * kPageSize, 2 * kPageSize, 0, 0);
  ASSERT_TRUE(shrunk.ok());
  EXPECT_EQ(Charged(), 2u);
}

}  // namespace
}  // namespace sentry::mm
