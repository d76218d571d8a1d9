// Opening, closing and duplicating files; fcntl, ioctl, pipes, directories, cwd.
#include <dirent.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "syscalls/common.h"
#include "syscalls/fcntl_async.h"
#include "syscalls/sys_socket.h"
#include "syscalls/sys_tty.h"
#include "vfs/inotify.h"
#include "vfs/lock.h"
#include "vfs/memfd.h"
#include "vfs/pipe.h"

namespace sentry::syscalls {

Result<vfs::Path> StartAt(Task& t, const vfs::Context& ctx, int dirfd, const std::string& path) {
  if ((!path.empty() && path[0] == '/') || dirfd == AT_FDCWD) return ctx.cwd;
  auto f = SENTRY_TRY(GetFile(t, dirfd));
  if (!f->dentry()) return Errno(ENOTDIR);
  vfs::Path p{f->mount(), f->dentry()};
  if (!p.inode()->IsDir() && !path.empty()) return Errno(ENOTDIR);
  return p;
}

Result<vfs::Path> ResolveAt(Task& t, const vfs::Context& ctx, int dirfd, GuestAddr path_addr,
                            int flags) {
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if (path.empty()) {
    if (!(flags & AT_EMPTY_PATH)) return Errno(ENOENT);
    if (dirfd == AT_FDCWD) return ctx.cwd;
    auto f = SENTRY_TRY(GetFile(t, dirfd));
    if (!f->dentry()) return Errno(EBADF);  // anonymous files have no place (callers fstat)
    return vfs::Path{f->mount(), f->dentry()};
  }
  vfs::Path start = SENTRY_TRY(StartAt(t, ctx, dirfd, path));
  return t.kernel().vfs().Resolve(ctx, start, path, !(flags & AT_SYMLINK_NOFOLLOW));
}

Result<uint64_t> SysOpenat(Task& t, int dirfd, GuestAddr path_addr, int flags, uint32_t mode) {
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if ((flags & O_TMPFILE) == O_TMPFILE) return Errno(EOPNOTSUPP);
  vfs::Context ctx = t.VfsContext();
  vfs::Path start = SENTRY_TRY(StartAt(t, ctx, dirfd, path));
  // x86_64 forces O_LARGEFILE (0100000; glibc's O_LARGEFILE is 0 there); F_GETFL shows it.
  constexpr int kForcedLargefile = 0100000;
  int file_flags = (flags & ~O_CLOEXEC) | kForcedLargefile;
  auto f = SENTRY_TRY(t.kernel().vfs().Open(ctx, start, path, file_flags, mode));
  return t.fds().Add(f, flags & O_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysOpenat2(Task& t, int dirfd, GuestAddr path_addr, GuestAddr how_addr,
                            size_t size) {
  // struct open_how grows by appending fields: a larger one is fine if the rest is zero.
  constexpr size_t kVer0 = sizeof(struct open_how);
  if (size < kVer0) return Errno(EINVAL);
  if (size > kPageSize) return Errno(E2BIG);
  std::vector<uint8_t> raw(size);
  SENTRY_TRY(t.CopyInBytes(how_addr, raw));
  for (size_t i = kVer0; i < size; i++) {
    if (raw[i] != 0) return Errno(E2BIG);
  }
  struct open_how how;
  memcpy(&how, raw.data(), kVer0);
  constexpr uint64_t kKnownFlags =
      O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |
      O_ASYNC | O_DIRECT | 0100000 /* O_LARGEFILE */ | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |
      O_CLOEXEC | O_SYNC | O_PATH | O_TMPFILE;
  constexpr uint64_t kKnownResolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS |
                                     RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_IN_ROOT |
                                     RESOLVE_CACHED;
  if (how.flags & ~kKnownFlags) return Errno(EINVAL);
  if (how.resolve & ~kKnownResolve) return Errno(EINVAL);
  if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT)) return Errno(EINVAL);
  bool creates = (how.flags & O_CREAT) || (how.flags & O_TMPFILE) == O_TMPFILE;
  if (how.mode & ~uint64_t{07777}) return Errno(EINVAL);
  if (how.mode != 0 && !creates) return Errno(EINVAL);
  // Nothing here is answered from a cache alone: only what would need I/O is refused, as
  // Linux refuses it.
  if ((how.resolve & RESOLVE_CACHED) && (how.flags & (O_CREAT | O_TRUNC | O_TMPFILE))) {
    return Errno(EAGAIN);
  }
  int flags = static_cast<int>(how.flags);
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if ((flags & O_TMPFILE) == O_TMPFILE) return Errno(EOPNOTSUPP);
  vfs::Context ctx = t.VfsContext();
  vfs::Path start = SENTRY_TRY(StartAt(t, ctx, dirfd, path));
  ctx.resolve = how.resolve;
  if (how.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) {
    // The directory dirfd names, even for an absolute path (which IN_ROOT reads from it).
    vfs::Path dir = SENTRY_TRY(StartAt(t, ctx, dirfd, "."));
    if (how.resolve & RESOLVE_BENEATH) ctx.beneath = dir;
    if (how.resolve & RESOLVE_IN_ROOT) ctx.root = start = dir;
  }
  constexpr int kForcedLargefile = 0100000;
  int file_flags = (flags & ~O_CLOEXEC) | kForcedLargefile;
  auto f = SENTRY_TRY(t.kernel().vfs().Open(ctx, start, path, file_flags,
                                            static_cast<uint32_t>(how.mode)));
  return t.fds().Add(f, flags & O_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysOpen(Task& t, GuestAddr path, int flags, uint32_t mode) {
  return SysOpenat(t, AT_FDCWD, path, flags, mode);
}

Result<uint64_t> SysCreat(Task& t, GuestAddr path, uint32_t mode) {
  return SysOpenat(t, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

Result<uint64_t> SysClose(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  SENTRY_TRY(t.fds().Remove(fd));
  // Closing any fd of a file drops the process's POSIX locks on it.
  ReleasePosixLocks(t, f);
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

// Record locks (F_GETLK/F_SETLK/F_SETLKW and their OFD forms).
static Result<uint64_t> FcntlLock(Task& t, const vfs::FileRef& f, int cmd, GuestAddr arg) {
  struct flock fl = SENTRY_TRY(t.CopyIn<struct flock>(arg));
  if (!f->inode() || f->flags() & O_PATH) return Errno(EBADF);
  bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
  if (ofd && fl.l_pid != 0) return Errno(EINVAL);
  int64_t base = 0;
  if (fl.l_whence == SEEK_CUR) {
    base = static_cast<int64_t>(SENTRY_TRY(f->Seek(0, SEEK_CUR)));
  } else if (fl.l_whence == SEEK_END) {
    struct stat st;
    SENTRY_TRY(f->Stat(&st));
    base = st.st_size;
  } else if (fl.l_whence != SEEK_SET) {
    return Errno(EINVAL);
  }
  int64_t start = base + fl.l_start;
  uint64_t end = UINT64_MAX;
  if (fl.l_len > 0) {
    end = static_cast<uint64_t>(start + fl.l_len);
  } else if (fl.l_len < 0) {
    end = static_cast<uint64_t>(start);
    start += fl.l_len;
  }
  if (start < 0) return Errno(EINVAL);
  const void* owner = ofd ? static_cast<const void*>(f.get()) : &t.tg();
  int pid = ofd ? -1 : t.tg().tgid;
  vfs::FileLocks& locks = f->inode()->locks();
  if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
    if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK) return Errno(EINVAL);
    auto c = locks.TestRecord(owner, fl.l_type, start, end);
    if (!c) {
      fl.l_type = F_UNLCK;
    } else {
      fl.l_type = c->write ? F_WRLCK : F_RDLCK;
      fl.l_whence = SEEK_SET;
      fl.l_start = static_cast<off_t>(c->start);
      fl.l_len = c->end == UINT64_MAX ? 0 : static_cast<off_t>(c->end - c->start);
      fl.l_pid = c->pid;
    }
    SENTRY_TRY(t.CopyOut(arg, fl));
    return 0;
  }
  if (fl.l_type == F_RDLCK && !f->Readable()) return Errno(EBADF);
  if (fl.l_type == F_WRLCK && !f->Writable()) return Errno(EBADF);
  bool wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
  SENTRY_TRY(locks.SetRecord(t, owner, pid, fl.l_type, start, end, wait));
  return 0;
}

Result<uint64_t> SysFlock(Task& t, int fd, int op) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->inode() || (f->flags() & O_PATH)) return Errno(EBADF);
  SENTRY_TRY(f->inode()->locks().Flock(t, f.get(), op & ~LOCK_NB, !(op & LOCK_NB)));
  return 0;
}

void ReleasePosixLocks(Task& t, const vfs::FileRef& f) {
  if (!f || !f->inode()) return;
  if (vfs::FileLocks* l = f->inode()->locks_if_any()) l->ReleaseRecords(&t.tg());
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
      // Turning O_NOATIME on or off is the owner's (or CAP_FOWNER's), as at open.
      if ((static_cast<int>(arg) ^ e.file->flags()) & O_NOATIME) {
        struct stat st;
        SENTRY_TRY(e.file->Stat(&st));
        vfs::Creds c = t.VfsContext().creds;
        if (c.uid != st.st_uid && !c.Capable(CAP_FOWNER)) return Errno(EPERM);
      }
      return FcntlSetFl(e.file, fd, static_cast<int>(arg));
    case F_SETOWN:
    case F_GETOWN:
    case F_SETOWN_EX:
    case F_GETOWN_EX:
    case F_SETSIG:
    case F_GETSIG:
      return FcntlAsync(t, e.file, cmd, arg);
    case F_SETLEASE:
    case F_GETLEASE:
      return FcntlLease(t, e.file, fd, cmd, arg);
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
      return FcntlLock(t, e.file, cmd, GuestAddr(arg));
    case F_GETPIPE_SZ:
    case F_SETPIPE_SZ: {
      std::shared_ptr<vfs::Pipe> pipe = vfs::PipeOf(*e.file);
      if (!pipe) return Errno(EBADF);
      if (cmd == F_GETPIPE_SZ) return pipe->capacity();
      // /proc/sys/fs/pipe-max-size bounds what an unprivileged caller may ask for.
      constexpr uint64_t kPipeMaxSize = 1 << 20;
      if (arg > (uint64_t{1} << 31)) return Errno(EINVAL);
      if (arg > kPipeMaxSize && !t.VfsContext().creds.Capable(CAP_SYS_RESOURCE))
        return Errno(EPERM);
      return SENTRY_TRY(pipe->SetCapacity(static_cast<size_t>(arg)));
    }
    case F_NOTIFY: {
      // Partial: dnotify requests on directories are accepted, but no SIGIO is sent.
      struct stat st;
      SENTRY_TRY(e.file->Stat(&st));
      if (!S_ISDIR(st.st_mode)) return Errno(ENOTDIR);
      return 0;
    }
    case F_ADD_SEALS:
      SENTRY_TRY(vfs::AddSeals(e.file, static_cast<uint32_t>(arg)));
      return 0;
    case F_GET_SEALS:
      return SENTRY_TRY(vfs::GetSeals(e.file));
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
    case FIOASYNC: {
      int on = SENTRY_TRY(t.CopyIn<int>(GuestAddr(arg)));
      SENTRY_TRY(SetAsyncFlag(f, fd, on != 0, true));
      return 0;
    }
    case FIONREAD: {
      int n = static_cast<int>(SENTRY_TRY(f->Ioctl(t, cmd, arg)));
      SENTRY_TRY(t.CopyOut(GuestAddr(arg), n));
      return 0;
    }
    default: {
      bool master;
      if (vfs::Tty* tty = vfs::AsTty(*f, &master)) return TtyIoctl(t, *tty, master, cmd, arg);
      if (netstack::AsSocket(*f)) return SocketIoctl(t, *f, cmd, arg);
      return f->Ioctl(t, cmd, arg);
    }
  }
}

Result<uint64_t> SysFaccessat2(Task& t, int dirfd, GuestAddr path_addr, int mode, int flags) {
  if (mode & ~7) return Errno(EINVAL);
  if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  if (!(flags & AT_EACCESS)) {
    // access(2) checks with the real ids, not the effective (fs) ones, and with the
    // capabilities a real uid of 0 would have (all permitted ones), or none.
    absl::MutexLock l(&t.kernel().mu());
    const kernel::Credentials& c = t.tg().creds;
    ctx.creds.uid = c.ruid;
    ctx.creds.gid = c.rgid;
    if (!(c.securebits & kernel::kSecbitNoSetuidFixup)) {
      ctx.creds.caps = c.ruid == 0 ? c.cap_permitted : 0;
    }
  }
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path_addr, flags));
  SENTRY_TRY(t.kernel().vfs().Access(ctx, p, mode));
  return 0;
}

Result<uint64_t> SysFaccessat(Task& t, int dirfd, GuestAddr path, int mode) {
  return SysFaccessat2(t, dirfd, path, mode, 0);
}

Result<uint64_t> SysAccess(Task& t, GuestAddr path, int mode) {
  return SysFaccessat2(t, AT_FDCWD, path, mode, 0);
}

Result<uint64_t> SysReadlinkat(Task& t, int dirfd, GuestAddr path_addr, GuestAddr buf, int size) {
  if (size <= 0) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  if (dirfd == AT_FDCWD && SENTRY_TRY(t.CopyInString(path_addr)).empty()) return Errno(ENOENT);
  vfs::Path p =
      SENTRY_TRY(ResolveAt(t, ctx, dirfd, path_addr, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH));
  if (!p.inode()->IsSymlink()) return Errno(EINVAL);
  std::string target;
  if (vfs::FileRef f = p.inode()->MagicFile()) {
    target = FilePath(t, f);
  } else {
    target = SENTRY_TRY(p.inode()->ReadLink());
  }
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
  vfs::NotifyFile(*f, IN_ACCESS);
  SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), n}));
  return n;
}

// The legacy getdents: struct linux_dirent { u64 d_ino; s64 d_off; u16 d_reclen; char
// d_name[]; ...; u8 d_type at d_reclen - 1 }. For any name its record is exactly as long as
// the dirent64 one (both round 20 + name length up to 8 bytes), so the same entries fit the
// same buffer: read dirent64 records and rearrange each in place.
Result<uint64_t> SysGetdents(Task& t, int fd, GuestAddr buf, uint32_t count) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  std::vector<uint8_t> data(std::min<uint32_t>(count, 1 << 20));
  size_t n = SENTRY_TRY(f->GetDents(data));
  constexpr size_t kName64 = offsetof(struct dirent64, d_name);  // 19
  constexpr size_t kName = kName64 - 1;                          // after d_reclen
  for (size_t pos = 0; pos < n;) {
    uint8_t* rec = data.data() + pos;
    uint16_t reclen;
    memcpy(&reclen, rec + offsetof(struct dirent64, d_reclen), sizeof(reclen));
    uint8_t type = rec[offsetof(struct dirent64, d_type)];
    size_t name_len = strnlen(reinterpret_cast<char*>(rec + kName64), reclen - kName64);
    memmove(rec + kName, rec + kName64, name_len);
    memset(rec + kName + name_len, 0, reclen - kName - name_len);
    rec[reclen - 1] = type;
    pos += reclen;
  }
  vfs::NotifyFile(*f, IN_ACCESS);
  SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), n}));
  return n;
}

Result<uint64_t> SysGetcwd(Task& t, GuestAddr buf, size_t size) {
  vfs::Context ctx = t.VfsContext();
  std::string cwd = t.kernel().vfs().PathString(ctx.root, ctx.cwd);
  if (cwd.ends_with(" (deleted)")) return Errno(ENOENT);
  if (size < cwd.size() + 1) return Errno(ERANGE);
  SENTRY_TRY(t.CopyOutBytes(buf, {reinterpret_cast<const uint8_t*>(cwd.c_str()), cwd.size() + 1}));
  return cwd.size() + 1;
}

static Result<uint64_t> ChdirTo(Task& t, const vfs::Context& ctx, const vfs::Path& p) {
  if (!p.inode()->IsDir()) return Errno(ENOTDIR);
  SENTRY_TRY(t.kernel().vfs().Access(ctx, p, X_OK));
  t.fs().set_cwd(p);
  return 0;
}

Result<uint64_t> SysChdir(Task& t, GuestAddr path_addr) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path_addr, 0));
  return ChdirTo(t, ctx, p);
}

Result<uint64_t> SysFchdir(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->dentry()) return Errno(ENOTDIR);
  return ChdirTo(t, t.VfsContext(), {f->mount(), f->dentry()});
}

Result<uint64_t> SysChroot(Task& t, GuestAddr path_addr) {
  vfs::Context ctx = t.VfsContext();
  if (!ctx.creds.Capable(CAP_SYS_CHROOT)) return Errno(EPERM);
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path_addr, 0));
  if (!p.inode()->IsDir()) return Errno(ENOTDIR);
  SENTRY_TRY(t.kernel().vfs().Access(ctx, p, X_OK));
  t.fs().set_root(p);
  return 0;
}

std::string FilePath(Task& t, const vfs::FileRef& f) {
  if (!f->dentry()) return f->Name();
  return t.kernel().vfs().PathString(t.fs().root(), {f->mount(), f->dentry()});
}

Result<uint64_t> SysUmask(Task& t, uint32_t mask) { return t.fs().exchange_umask(mask); }

}  // namespace sentry::syscalls
