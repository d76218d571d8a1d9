// Advisory file locks of one inode: POSIX record locks (fcntl F_SETLK, owned by a process),
// OFD locks (F_OFD_SETLK, owned by an open file description; they conflict with POSIX
// locks as on Linux) and flock(2) locks (owned by an open file description), and leases
// (F_SETLEASE, held by an open file description; vfs/lease.cc).
//
// Lock order: FileLocks::mu_ -> AsyncState::mu_ (a lease break's signal) -> TimerQueue::mu_;
// waiting happens with it released.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"

namespace sentry::vfs {

class AsyncState;

// /proc/sys/fs/lease-break-time: how long, in seconds, an opener waits for a lease holder
// before the lease is taken away (Linux's default 45).
int LeaseBreakTime();
void SetLeaseBreakTime(int seconds);

struct RecordLock {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive; UINT64_MAX means "to the end of the file, however long"
  bool write = false;
  const void* owner = nullptr;
  int pid = 0;  // -1 for OFD locks (as F_GETLK reports them)
};

class FileLocks {
 public:
  // F_SETLK/F_SETLKW (and the OFD forms): `type` is F_RDLCK, F_WRLCK or F_UNLCK. Blocks when
  // `wait` until no other owner's lock conflicts; EAGAIN without `wait`.
  Result<void> SetRecord(Blocker& b, const void* owner, int pid, short type, uint64_t start,
                         uint64_t end, bool wait);
  // F_GETLK: the first lock of another owner that conflicts, if any.
  std::optional<RecordLock> TestRecord(const void* owner, short type, uint64_t start, uint64_t end);
  // Drops every record lock of `owner` (a process closing any fd of the file, or the last
  // close of an OFD lock's file description).
  void ReleaseRecords(const void* owner);

  // flock(2): LOCK_SH, LOCK_EX or LOCK_UN, with `wait` unless LOCK_NB.
  Result<void> Flock(Blocker& b, const void* owner, int op, bool wait);
  void ReleaseFlock(const void* owner);

  // F_SETLEASE by open file `file` (whose async state gets the break signal, with si_fd
  // `fd`): F_RDLCK, F_WRLCK or F_UNLCK. `writers` and `readers` count the inode's opens for
  // writing and for reading only, the caller's own included (`self_write`/`self_read` say
  // which one that is). EAGAIN when other opens or other leases conflict.
  Result<void> SetLease(const void* file, AsyncState* async, int fd, int type, int writers,
                        int readers, bool self_write, bool self_read);
  // F_GETLEASE: the lease's type, or what a pending break will leave of it.
  int GetLease(const void* file);
  // An open for reading (or writing, if `write`) by someone other than `opener`: breaks the
  // leases it conflicts with, signalling their holders, then waits until they are given up
  // or time out (EWOULDBLOCK at once if `nonblock`).
  Result<void> BreakLeases(Blocker& b, const void* opener, bool write, bool nonblock);
  void ReleaseLease(const void* file);

 private:
  struct Lease {
    const void* file;
    AsyncState* async;
    int fd;
    bool write;
    int target;  // -1, or F_RDLCK / F_UNLCK while a break is pending
    absl::Time deadline;
  };
  // Ends the breaks whose time is up: the lease becomes its target.
  void TimeOutLeasesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool LeaseConflictsLocked(const void* opener, bool write) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  bool RecordConflictLocked(const void* owner, bool write, uint64_t start, uint64_t end,
                            RecordLock* found) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlockRangeLocked(const void* owner, uint64_t start, uint64_t end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::vector<RecordLock> records_ ABSL_GUARDED_BY(mu_);
  // Which owner each blocked F_SETLKW waits for (deadlock detection within this file).
  std::vector<std::pair<const void*, const void*>> waits_ ABSL_GUARDED_BY(mu_);
  struct FlockEntry {
    const void* owner;
    bool exclusive;
  };
  std::vector<FlockEntry> flocks_ ABSL_GUARDED_BY(mu_);
  std::vector<Lease> leases_ ABSL_GUARDED_BY(mu_);
  WaitQueue queue_;
};

}  // namespace sentry::vfs
