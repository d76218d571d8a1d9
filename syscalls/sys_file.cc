// Opening, closing and duplicating files; fcntl, ioctl, pipes, directories, cwd.
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "syscalls/common.h"
#include "vfs/pipe.h"

namespace sentry::syscalls {

Result<std::string> AbsPath(Task& t, int dirfd, const std::string& path) {
  if (path.empty()) return Errno(ENOENT);
  if (path[0] == '/' || dirfd == AT_FDCWD) return vfs::HostRoot::Join(t.fs().cwd, path);
  auto f = SENTRY_TRY(GetFile(t, dirfd));
  struct stat st;
  SENTRY_TRY(f->Stat(&st));
  if (!S_ISDIR(st.st_mode)) return Errno(ENOTDIR);
  return vfs::HostRoot::Join(f->Name(), path);
}

Result<uint64_t> SysOpenat(Task& t, int dirfd, GuestAddr path_addr, int flags, uint32_t mode) {
  (void)mode;
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  std::string abs = SENTRY_TRY(AbsPath(t, dirfd, path));
  auto f = SENTRY_TRY(t.kernel().root().Open(abs, flags & ~O_CLOEXEC, !(flags & O_NOFOLLOW)));
  return t.fds().Add(f, flags & O_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysOpen(Task& t, GuestAddr path, int flags, uint32_t mode) {
  return SysOpenat(t, AT_FDCWD, path, flags, mode);
}

Result<uint64_t> SysCreat(Task& t, GuestAddr path, uint32_t mode) {
  return SysOpenat(t, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

Result<uint64_t> SysClose(Task& t, int fd) {
  SENTRY_TRY(t.fds().Remove(fd));
  return 0;
}

Result<uint64_t> SysCloseRange(Task& t, uint32_t first, uint32_t last, uint32_t flags) {
  if (first > last || (flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE))) return Errno(EINVAL);
  t.fds().RemoveRange(first, last, flags & CLOSE_RANGE_CLOEXEC);
  return 0;
}

Result<uint64_t> SysDup(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return t.fds().Add(f, false, 0, NofileLimit(t));
}

Result<uint64_t> SysDup3(Task& t, int oldfd, int newfd, int flags) {
  if (oldfd == newfd || (flags & ~O_CLOEXEC)) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, oldfd));
  SENTRY_TRY(t.fds().Set(newfd, f, flags & O_CLOEXEC, NofileLimit(t)));
  return static_cast<uint64_t>(newfd);
}

Result<uint64_t> SysDup2(Task& t, int oldfd, int newfd) {
  auto f = SENTRY_TRY(GetFile(t, oldfd));
  if (oldfd == newfd) return static_cast<uint64_t>(newfd);
  SENTRY_TRY(t.fds().Set(newfd, f, false, NofileLimit(t)));
  return static_cast<uint64_t>(newfd);
}

Result<uint64_t> SysFcntl(Task& t, int fd, int cmd, uint64_t arg) {
  auto e = SENTRY_TRY(t.fds().GetEntry(fd));
  switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC: {
      uint64_t limit = NofileLimit(t);
      if (static_cast<int64_t>(static_cast<int>(arg)) < 0 || arg >= limit) return Errno(EINVAL);
      return t.fds().Add(e.file, cmd == F_DUPFD_CLOEXEC, static_cast<int>(arg), limit);
    }
    case F_GETFD:
      return e.cloexec ? FD_CLOEXEC : 0;
    case F_SETFD:
      SENTRY_TRY(t.fds().SetCloexec(fd, arg & FD_CLOEXEC));
      return 0;
    case F_GETFL:
      return static_cast<uint64_t>(e.file->flags());
    case F_SETFL:
      e.file->SetStatusFlags(static_cast<int>(arg));
      return 0;
    case F_GETPIPE_SZ: {
      struct stat st;
      SENTRY_TRY(e.file->Stat(&st));
      if (!S_ISFIFO(st.st_mode)) return Errno(EBADF);
      return 65536;
    }
    default:
      return Errno(EINVAL);
  }
}

Result<uint64_t> SysPipe2(Task& t, GuestAddr fds_addr, int flags) {
  if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT)) return Errno(EINVAL);
  auto [r, w] = vfs::NewPipe(flags);
  uint64_t limit = NofileLimit(t);
  int rfd = static_cast<int>(SENTRY_TRY(t.fds().Add(r, flags & O_CLOEXEC, 0, limit)));
  auto wfd = t.fds().Add(w, flags & O_CLOEXEC, 0, limit);
  if (!wfd.ok()) {
    (void)t.fds().Remove(rfd);
    return wfd.error();
  }
  int32_t fds[2] = {rfd, *wfd};
  auto c = t.CopyOut(fds_addr, fds);
  if (!c.ok()) {
    (void)t.fds().Remove(rfd);
    (void)t.fds().Remove(*wfd);
    return c.error();
  }
  return 0;
}

Result<uint64_t> SysPipe(Task& t, GuestAddr fds) { return SysPipe2(t, fds, 0); }

Result<uint64_t> SysIoctl(Task& t, int fd, uint64_t cmd, uint64_t arg) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  switch (cmd) {
    case FIOCLEX:
    case FIONCLEX:
      SENTRY_TRY(t.fds().SetCloexec(fd, cmd == FIOCLEX));
      return 0;
    case FIONBIO: {
      int on = SENTRY_TRY(t.CopyIn<int>(GuestAddr(arg)));
      f->SetStatusFlags(on ? f->flags() | O_NONBLOCK : f->flags() & ~O_NONBLOCK);
      return 0;
    }
    case FIONREAD: {
      int n = static_cast<int>(SENTRY_TRY(f->Ioctl(t, cmd, arg)));
      SENTRY_TRY(t.CopyOut(GuestAddr(arg), n));
      return 0;
    }
    default:
      return f->Ioctl(t, cmd, arg);
  }
}

Result<uint64_t> SysFaccessat2(Task& t, int dirfd, GuestAddr path_addr, int mode, int flags) {
  if (mode & ~7) return Errno(EINVAL);
  if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Errno(EINVAL);
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  std::string abs = SENTRY_TRY(AbsPath(t, dirfd, path));
  struct stat st;
  SENTRY_TRY(t.kernel().root().Stat(abs, !(flags & AT_SYMLINK_NOFOLLOW), &st));
  if ((mode & W_OK) && !S_ISCHR(st.st_mode)) return Errno(EROFS);  // the tree is read-only
  if ((mode & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111)) return Errno(EACCES);
  return 0;
}

Result<uint64_t> SysFaccessat(Task& t, int dirfd, GuestAddr path, int mode) {
  return SysFaccessat2(t, dirfd, path, mode, 0);
}

Result<uint64_t> SysAccess(Task& t, GuestAddr path, int mode) {
  return SysFaccessat2(t, AT_FDCWD, path, mode, 0);
}

Result<uint64_t> SysReadlinkat(Task& t, int dirfd, GuestAddr path_addr, GuestAddr buf,
                               int size) {
  if (size <= 0) return Errno(EINVAL);
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  std::string abs = SENTRY_TRY(AbsPath(t, dirfd, path));
  std::string target = SENTRY_TRY(t.kernel().root().ReadLink(abs));
  size_t n = std::min<size_t>(target.size(), size);
  SENTRY_TRY(t.CopyOutBytes(buf, {reinterpret_cast<const uint8_t*>(target.data()), n}));
  return n;
}

Result<uint64_t> SysReadlink(Task& t, GuestAddr path, GuestAddr buf, int size) {
  return SysReadlinkat(t, AT_FDCWD, path, buf, size);
}

Result<uint64_t> SysGetdents64(Task& t, int fd, GuestAddr buf, uint32_t count) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  std::vector<uint8_t> data(std::min<uint32_t>(count, 1 << 20));
  size_t n = SENTRY_TRY(f->GetDents(data));
  SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), n}));
  return n;
}

Result<uint64_t> SysGetcwd(Task& t, GuestAddr buf, size_t size) {
  std::string cwd = t.fs().cwd;
  if (size < cwd.size() + 1) return Errno(ERANGE);
  SENTRY_TRY(t.CopyOutBytes(buf, {reinterpret_cast<const uint8_t*>(cwd.c_str()), cwd.size() + 1}));
  return cwd.size() + 1;
}

static Result<uint64_t> ChdirTo(Task& t, const std::string& abs) {
  auto node = SENTRY_TRY(t.kernel().root().Resolve(abs, true));
  struct stat st;
  SENTRY_TRY(t.kernel().root().Stat(node.path, true, &st));
  if (!S_ISDIR(st.st_mode)) return Errno(ENOTDIR);
  t.fs().cwd = node.path;
  return 0;
}

Result<uint64_t> SysChdir(Task& t, GuestAddr path_addr) {
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  return ChdirTo(t, SENTRY_TRY(AbsPath(t, AT_FDCWD, path)));
}

Result<uint64_t> SysFchdir(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return ChdirTo(t, f->Name());
}

Result<uint64_t> SysUmask(Task& t, uint32_t mask) {
  uint32_t old = t.fs().umask;
  t.fs().umask = mask & 0777;
  return old;
}

}  // namespace sentry::syscalls
