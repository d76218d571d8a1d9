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

// Resolves (dirfd, path) to an absolute guest path. EBADF/ENOTDIR as Linux for bad dirfds.
Result<std::string> AbsPath(Task& t, int dirfd, const std::string& path);

// A guest timespec, validated (EINVAL for bad nanoseconds).
Result<absl::Duration> CopyInDuration(Task& t, GuestAddr addr);

// Sends SIGPIPE to the calling thread (write to a pipe with no reader).
void RaiseSigpipe(Task& t);

}  // namespace sentry::syscalls
