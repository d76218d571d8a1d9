// fcntl's signal-driven I/O and lease commands (sys_fcntl_async.cc).
#pragma once

#include "syscalls/common.h"

namespace sentry::syscalls {

// F_SETFL: the status flags, with O_ASYNC starting or stopping the file's watch (fd is
// what si_fd will report).
Result<uint64_t> FcntlSetFl(const vfs::FileRef& f, int fd, int flags);
// F_SETFL's O_ASYNC bit and FIOASYNC (`ioctl`: ENOTTY for files that cannot signal).
Result<void> SetAsyncFlag(const vfs::FileRef& f, int fd, bool on, bool ioctl);
// F_SETOWN, F_GETOWN, F_SETOWN_EX, F_GETOWN_EX, F_SETSIG, F_GETSIG.
Result<uint64_t> FcntlAsync(Task& t, const vfs::FileRef& f, int cmd, uint64_t arg);
// F_SETLEASE, F_GETLEASE.
Result<uint64_t> FcntlLease(Task& t, const vfs::FileRef& f, int fd, int cmd, uint64_t arg);

}  // namespace sentry::syscalls
