// The socket calls that name an fd, before the netstack exists. No file in the sandbox is a
// socket yet, so each of them fails as Linux fails it on any other file: EBADF for an fd that
// is not open, ENOTSOCK for one that is. Programs rely on the difference: bash, for one,
// decides from getpeername(0) whether its stdin is a network connection (and then reads
// ~/.bashrc), and takes any other error, ENOSYS included, for "yes".
#include "syscalls/common.h"

namespace sentry::syscalls {

Result<uint64_t> SysSocketCallOnFd(Task& t, int fd) {
  SENTRY_TRY(GetFile(t, fd));
  return Errno(ENOTSOCK);
}

}  // namespace sentry::syscalls
