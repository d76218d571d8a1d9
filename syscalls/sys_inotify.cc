// inotify_init, inotify_init1, inotify_add_watch, inotify_rm_watch. The events themselves
// are reported by the VFS and the file syscalls (vfs/inotify.h).
#include <sys/inotify.h>

#include "syscalls/common.h"
#include "vfs/inotify.h"

namespace sentry::syscalls {

Result<uint64_t> SysInotifyInit1(Task& t, int flags) {
  if (flags & ~(IN_CLOEXEC | IN_NONBLOCK)) return Errno(EINVAL);
  vfs::FileRef f = SENTRY_TRY(vfs::NewInotify(flags));
  return t.fds().Add(f, flags & IN_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysInotifyInit(Task& t) { return SysInotifyInit1(t, 0); }

Result<uint64_t> SysInotifyAddWatch(Task& t, int fd, GuestAddr path, uint32_t mask) {
  constexpr uint32_t kValid = IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK |
                              IN_MASK_ADD | IN_MASK_CREATE | IN_ONESHOT;
  if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE)) return Errno(EINVAL);
  if (!(mask & kValid)) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!vfs::IsInotify(*f)) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  int at = (mask & IN_DONT_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path, at));
  if ((mask & IN_ONLYDIR) && !p.inode()->IsDir()) return Errno(ENOTDIR);
  SENTRY_TRY(t.kernel().vfs().Access(ctx, p, R_OK));  // watching needs read permission
  return static_cast<uint64_t>(SENTRY_TRY(vfs::AddWatch(f, p.inode(), mask)));
}

Result<uint64_t> SysInotifyRmWatch(Task& t, int fd, int wd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  SENTRY_TRY(vfs::RemoveWatch(f, wd));
  return 0;
}

}  // namespace sentry::syscalls
