// Leases (vfs/lease.cc), tmpfs extended attributes (vfs/mem_xattr.cc) and FIFO partner
// waits (vfs/pipe.cc), driven directly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/xattr.h>

#include <thread>

#include "absl/time/clock.h"
#include "tests/unit/fake_blocker.h"
#include "vfs/lock.h"
#include "vfs/mem_inode.h"
#include "vfs/pipe.h"

namespace sentry::vfs {
namespace {

const int kHolder = 0;  // stand-ins for open files: only their addresses matter
const int kOther = 0;

TEST(LeaseTest, OpenCountsDecideWhatMayBeLeased) {
  FileLocks locks;
  // A read lease wants no writer at all.
  EXPECT_EQ(locks.SetLease(&kHolder, nullptr, 3, F_RDLCK, 1, 0, true, false).error().code(),
            EAGAIN);
  // A write lease wants no open but the caller's.
  EXPECT_EQ(locks.SetLease(&kHolder, nullptr, 3, F_WRLCK, 0, 2, false, true).error().code(),
            EAGAIN);
  EXPECT_TRUE(locks.SetLease(&kHolder, nullptr, 3, F_WRLCK, 0, 1, false, true).ok());
  EXPECT_EQ(locks.GetLease(&kHolder), F_WRLCK);
  // Nobody else gets a lease beside a write lease.
  EXPECT_EQ(locks.SetLease(&kOther, nullptr, 4, F_RDLCK, 0, 2, false, true).error().code(),
            EAGAIN);
  EXPECT_TRUE(locks.SetLease(&kHolder, nullptr, 3, F_UNLCK, 0, 1, false, true).ok());
  EXPECT_EQ(locks.GetLease(&kHolder), F_UNLCK);
  EXPECT_EQ(locks.SetLease(&kHolder, nullptr, 3, F_UNLCK, 0, 1, false, true).error().code(),
            EAGAIN);
  EXPECT_EQ(locks.SetLease(&kHolder, nullptr, 3, 7, 0, 1, false, true).error().code(), EINVAL);
}

TEST(LeaseTest, BreakWaitsForTheHolder) {
  FileLocks locks;
  ASSERT_TRUE(locks.SetLease(&kHolder, nullptr, 3, F_RDLCK, 0, 1, false, true).ok());
  testing::FakeBlocker b;
  // Readers pass a read lease; a non-blocking writer is turned away but starts the break.
  EXPECT_TRUE(locks.BreakLeases(b, nullptr, false, true).ok());
  EXPECT_EQ(locks.BreakLeases(b, nullptr, true, true).error().code(), EWOULDBLOCK);
  EXPECT_EQ(locks.GetLease(&kHolder), F_UNLCK);  // what the pending break leaves
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(locks.SetLease(&kHolder, nullptr, 3, F_UNLCK, 0, 1, false, true).ok());
  });
  EXPECT_TRUE(locks.BreakLeases(b, nullptr, true, false).ok());
  holder.join();
}

TEST(LeaseTest, BreakTimesOut) {
  FileLocks locks;
  int old = LeaseBreakTime();
  SetLeaseBreakTime(1);
  ASSERT_TRUE(locks.SetLease(&kHolder, nullptr, 3, F_WRLCK, 0, 1, false, true).ok());
  testing::FakeBlocker b;
  absl::Time start = absl::Now();
  EXPECT_TRUE(locks.BreakLeases(b, nullptr, false, false).ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));
  // A write lease broken by a reader is downgraded, not removed.
  EXPECT_EQ(locks.GetLease(&kHolder), F_RDLCK);
  SetLeaseBreakTime(old);
}

TEST(TmpfsXattrTest, NamespacesAndFlags) {
  InodeRef root = NewTmpfs(0755, 0, 0);
  EXPECT_TRUE(root->SetXattr("user.a", "1", 0).ok());
  EXPECT_EQ(*root->GetXattr("user.a"), "1");
  EXPECT_EQ(root->SetXattr("user.a", "2", XATTR_CREATE).error().code(), EEXIST);
  EXPECT_EQ(root->SetXattr("user.b", "2", XATTR_REPLACE).error().code(), ENODATA);
  EXPECT_TRUE(root->SetXattr("trusted.t", "", 0).ok());
  EXPECT_EQ(root->SetXattr("system.x", "", 0).error().code(), EOPNOTSUPP);
  EXPECT_EQ(root->SetXattr("user.", "", 0).error().code(), EINVAL);
  EXPECT_EQ(root->ListXattr()->size(), 2u);
  EXPECT_TRUE(root->RemoveXattr("user.a").ok());
  EXPECT_EQ(root->RemoveXattr("user.a").error().code(), ENODATA);
  EXPECT_EQ(root->GetXattr("user.a").error().code(), ENODATA);
}

TEST(FifoTest, LoneReaderWaitsForAWriter) {
  auto pipe = NewFifoPipe();
  FileRef r = *OpenFifo(pipe, O_RDONLY);
  std::thread writer([pipe] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    FileRef w = *OpenFifo(pipe, O_WRONLY);
  });
  testing::FakeBlocker b;
  EXPECT_TRUE(WaitFifoPartner(b, *r).ok());
  writer.join();
  // No reader: a non-blocking writer is refused.
  r.reset();
  EXPECT_EQ(OpenFifo(pipe, O_WRONLY | O_NONBLOCK).error().code(), ENXIO);
}

}  // namespace
}  // namespace sentry::vfs
