// Leases (fcntl F_SETLEASE): an open file's claim to be told, by a signal, before another
// open of its file proceeds. A read lease is broken by an open for writing; a write lease by
// any open. The opener waits until the holder gives the lease up (or downgrades a write
// lease to a read lease for a reading opener), or until lease-break-time passes and the
// lease is taken away.
#include <fcntl.h>

#include <algorithm>
#include <atomic>

#include "absl/time/clock.h"
#include "vfs/async.h"
#include "vfs/lock.h"

namespace sentry::vfs {

namespace {
std::atomic<int> g_lease_break_time{45};
}  // namespace

int LeaseBreakTime() { return g_lease_break_time.load(); }
void SetLeaseBreakTime(int seconds) { g_lease_break_time.store(seconds); }

void FileLocks::TimeOutLeasesLocked() {
  absl::Time now = absl::Now();
  for (Lease& l : leases_) {
    if (l.target == F_RDLCK && l.deadline <= now) {
      l.write = false;
      l.target = -1;
    }
  }
  std::erase_if(leases_,
                [now](const Lease& l) { return l.target == F_UNLCK && l.deadline <= now; });
}

bool FileLocks::LeaseConflictsLocked(const void* opener, bool write) {
  for (const Lease& l : leases_) {
    if (l.file != opener && (write || l.write)) return true;
  }
  return false;
}

Result<void> FileLocks::SetLease(const void* file, AsyncState* async, int fd, int type, int writers,
                                 int readers, bool self_write, bool self_read) {
  if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK) return Errno(EINVAL);
  {
    absl::MutexLock l(&mu_);
    TimeOutLeasesLocked();
    auto mine = std::find_if(leases_.begin(), leases_.end(),
                             [file](const Lease& x) { return x.file == file; });
    if (type == F_UNLCK) {
      // Giving up a lease one does not hold is an error, as Linux's generic_delete_lease.
      if (mine == leases_.end()) return Errno(EAGAIN);
      leases_.erase(mine);
    } else {
      // Linux's check_conflicting_open: a read lease wants no writer at all (the caller's
      // own write open included), a write lease no open but the caller's.
      if (type == F_RDLCK && writers > 0) return Errno(EAGAIN);
      if (type == F_WRLCK && (writers != (self_write ? 1 : 0) || readers != (self_read ? 1 : 0))) {
        return Errno(EAGAIN);
      }
      for (const Lease& x : leases_) {
        if (x.file == file) continue;
        if (type == F_WRLCK || x.write || x.target == F_UNLCK) return Errno(EAGAIN);
      }
      if (mine == leases_.end()) {
        leases_.push_back({file, async, fd, type == F_WRLCK, -1, absl::InfiniteFuture()});
      } else {
        mine->write = type == F_WRLCK;
        mine->async = async;
        mine->fd = fd;
        // Doing what a pending break asks for ends it.
        if (mine->target == type) mine->target = -1;
      }
    }
  }
  queue_.Notify();
  return Ok();
}

int FileLocks::GetLease(const void* file) {
  absl::MutexLock l(&mu_);
  TimeOutLeasesLocked();
  for (const Lease& x : leases_) {
    if (x.file != file) continue;
    if (x.target != -1) return x.target;
    return x.write ? F_WRLCK : F_RDLCK;
  }
  return F_UNLCK;
}

Result<void> FileLocks::BreakLeases(Blocker& b, const void* opener, bool write, bool nonblock) {
  ScopedWait sw(queue_, b.waiter());
  for (;;) {
    absl::Time deadline = absl::InfiniteFuture();
    {
      absl::MutexLock l(&mu_);
      TimeOutLeasesLocked();
      if (!LeaseConflictsLocked(opener, write)) return Ok();
      int target = write ? F_UNLCK : F_RDLCK;
      for (Lease& x : leases_) {
        if (x.file == opener || !(write || x.write)) continue;
        // A new break, or a pending downgrade that a writer turns into an unlock.
        if (x.target == -1 || (x.target == F_RDLCK && target == F_UNLCK)) {
          // 0 (or less) means no limit, as Linux.
          int secs = LeaseBreakTime();
          x.deadline = secs > 0 ? absl::Now() + absl::Seconds(secs) : absl::InfiniteFuture();
          x.target = target;
          if (x.async) x.async->SendLeaseBreak(x.fd);
        }
        deadline = std::min(deadline, x.deadline);
      }
    }
    if (nonblock) return Errno(EWOULDBLOCK);
    auto r = b.Wait(deadline);
    if (!r.ok() && r.error().code() != ETIMEDOUT) return r.error();
  }
}

void FileLocks::ReleaseLease(const void* file) {
  {
    absl::MutexLock l(&mu_);
    size_t n = std::erase_if(leases_, [file](const Lease& x) { return x.file == file; });
    if (n == 0) return;
  }
  queue_.Notify();
}

}  // namespace sentry::vfs
