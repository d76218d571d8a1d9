// Helpers shared by the syscall handlers.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>

#include "sentry/kernel/kernel.h"
#include "syscalls/table.h"

namespace sentry::syscalls {

using kernel::Task;

inline Result<vfs::FileRef> GetFile(Task& t, int fd) { return t.fds().Get(fd); }

inline uint64_t NofileLimit(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().rlimits[RLIMIT_NOFILE].cur;
}

// The caller's RLIMIT_AS and RLIMIT_DATA, which mmap, mremap, brk, mprotect and shmat check.
inline mm::VmLimits VmLimitsOf(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  const auto& r = t.tg().rlimits;
  return {r[RLIMIT_AS].cur, r[RLIMIT_DATA].cur, r[RLIMIT_DATA].max};
}

// Where a *at() walk of `path` starts: the cwd for AT_FDCWD, the directory `dirfd` names
// otherwise (EBADF, ENOTDIR as Linux). Absolute paths ignore it.
Result<vfs::Path> StartAt(Task& t, const vfs::Context& ctx, int dirfd, const std::string& path);
// Resolves (dirfd, path) with AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH `flags`.
Result<vfs::Path> ResolveAt(Task& t, const vfs::Context& ctx, int dirfd, GuestAddr path,
                            int flags);
// Drops the calling process's POSIX record locks on `f`'s inode (any close does).
void ReleasePosixLocks(Task& t, const vfs::FileRef& f);

// The path of an open file as the task sees it ("pipe:[N]" and such for anonymous files).
std::string FilePath(Task& t, const vfs::FileRef& f);

// A guest timespec, validated (EINVAL for bad nanoseconds).
Result<absl::Duration> CopyInDuration(Task& t, GuestAddr addr);

// Installs the guest sigset at `mask_addr` (if not null) as the mask for the rest of this
// syscall (ppoll, pselect6, epoll_pwait); the old mask comes back after any handler runs.
Result<void> SetTemporarySignalMask(Task& t, GuestAddr mask_addr);
// The same for pselect6's and io_pgetevents' {const sigset_t*, size_t} argument at `pair`
// (null: no change; EINVAL for a size other than 8).
Result<void> SetTemporarySignalMaskPair(Task& t, GuestAddr pair);

// Before a write to `f`: a writer without CAP_FSETID clears set-user-ID, and set-group-ID
// when group execute is set, as Linux's file_remove_privs.
Result<void> RemovePrivsForWrite(Task& t, const vfs::FileRef& f);

// RLIMIT_MEMLOCK for memory that mmap, mremap or brk add (sys_mlock.cc): `len` more locked
// bytes must fit (EAGAIN). CheckLockedMapping also needs the right to lock for MAP_LOCKED
// (EPERM) and counts mlockall(MCL_FUTURE).
Result<void> CheckLockedGrowth(Task& t, bool locked, uint64_t len);
Result<void> CheckLockedMapping(Task& t, int flags, uint64_t len);

// What Linux's commit_creds does besides installing them (Credentials::UnsettlesDumpable):
// the process may become non-dumpable and the calling thread loses its parent-death signal.
// Preconditions: Kernel::mu_ held; `t`'s credentials are the new ones.
void CommitCreds(Task& t, const kernel::Credentials& old);

// ioprio_set's (and IOCB_FLAG_IOPRIO's) check of a priority, Linux's ioprio_check_cap: EINVAL
// for a bad class or level, EPERM for the real-time class without privilege.
Result<void> CheckIoprio(Task& t, int ioprio);

// Sends SIGPIPE to the calling thread (write to a pipe with no reader).
void RaiseSigpipe(Task& t);

// RLIMIT_FSIZE for a regular file growing to `new_size` bytes (truncate, fallocate), as Linux's
// inode_newsize_ok: past the soft limit the thread gets SIGXFSZ and the call EFBIG.
Result<void> CheckFileSizeLimit(Task& t, uint64_t new_size);

}  // namespace sentry::syscalls
