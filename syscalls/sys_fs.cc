// Changing the file tree: mkdir, mknod, unlink, rename, link, symlink; attributes (chmod,
// chown, utimes, truncate); fsync, statfs, xattrs. mount and umount are in sys_mount.cc.
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <cstring>

#include "syscalls/common.h"
#include "vfs/inotify.h"
#include "vfs/mem_inode.h"

namespace sentry::syscalls {
namespace {

struct At {
  vfs::Context ctx;
  vfs::Path start;
  std::string path;
};

Result<At> PathAt(Task& t, int dirfd, GuestAddr path_addr) {
  At a;
  a.path = SENTRY_TRY(t.CopyInString(path_addr));
  a.ctx = t.VfsContext();
  a.start = SENTRY_TRY(StartAt(t, a.ctx, dirfd, a.path));
  return a;
}

vfs::Vfs& V(Task& t) { return t.kernel().vfs(); }

// The place of an open file, for f*() calls that act through the VFS.
Result<vfs::Path> FilePlace(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->dentry() || (f->flags() & O_PATH)) return Errno(EBADF);
  return vfs::Path{f->mount(), f->dentry()};
}

}  // namespace

Result<uint64_t> SysMkdirat(Task& t, int dirfd, GuestAddr path, uint32_t mode) {
  At a = SENTRY_TRY(PathAt(t, dirfd, path));
  SENTRY_TRY(V(t).Mkdir(a.ctx, a.start, a.path, mode));
  return 0;
}

Result<uint64_t> SysMkdir(Task& t, GuestAddr path, uint32_t mode) {
  return SysMkdirat(t, AT_FDCWD, path, mode);
}

Result<uint64_t> SysMknodat(Task& t, int dirfd, GuestAddr path, uint32_t mode, uint32_t dev) {
  At a = SENTRY_TRY(PathAt(t, dirfd, path));
  SENTRY_TRY(V(t).Mknod(a.ctx, a.start, a.path, mode, dev));
  return 0;
}

Result<uint64_t> SysMknod(Task& t, GuestAddr path, uint32_t mode, uint32_t dev) {
  return SysMknodat(t, AT_FDCWD, path, mode, dev);
}

Result<uint64_t> SysUnlinkat(Task& t, int dirfd, GuestAddr path, int flags) {
  if (flags & ~AT_REMOVEDIR) return Errno(EINVAL);
  At a = SENTRY_TRY(PathAt(t, dirfd, path));
  SENTRY_TRY(V(t).Unlink(a.ctx, a.start, a.path, flags & AT_REMOVEDIR));
  return 0;
}

Result<uint64_t> SysUnlink(Task& t, GuestAddr path) { return SysUnlinkat(t, AT_FDCWD, path, 0); }

Result<uint64_t> SysRmdir(Task& t, GuestAddr path) {
  return SysUnlinkat(t, AT_FDCWD, path, AT_REMOVEDIR);
}

Result<uint64_t> SysRenameat2(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd,
                              GuestAddr newpath, uint32_t flags) {
  At o = SENTRY_TRY(PathAt(t, olddirfd, oldpath));
  At n = SENTRY_TRY(PathAt(t, newdirfd, newpath));
  SENTRY_TRY(V(t).Rename(o.ctx, o.start, o.path, n.start, n.path, flags));
  return 0;
}

Result<uint64_t> SysRenameat(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd,
                             GuestAddr newpath) {
  return SysRenameat2(t, olddirfd, oldpath, newdirfd, newpath, 0);
}

Result<uint64_t> SysRename(Task& t, GuestAddr oldpath, GuestAddr newpath) {
  return SysRenameat2(t, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

Result<uint64_t> SysLinkat(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd,
                           GuestAddr newpath, int flags) {
  if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) return Errno(EINVAL);
  At n = SENTRY_TRY(PathAt(t, newdirfd, newpath));
  std::string old = SENTRY_TRY(t.CopyInString(oldpath));
  if (old.empty() && (flags & AT_EMPTY_PATH)) {
    // Linking an open file (O_PATH included) by fd: start at the file, walk nothing.
    auto f = SENTRY_TRY(GetFile(t, olddirfd));
    if (!f->dentry()) return Errno(ENOENT);
    vfs::Path p{f->mount(), f->dentry()};
    if (p.inode()->IsDir()) return Errno(EPERM);
    SENTRY_TRY(V(t).LinkPath(n.ctx, p, n.start, n.path));
    return 0;
  }
  vfs::Path ostart = SENTRY_TRY(StartAt(t, n.ctx, olddirfd, old));
  SENTRY_TRY(V(t).Link(n.ctx, ostart, old, n.start, n.path, flags & AT_SYMLINK_FOLLOW));
  return 0;
}

Result<uint64_t> SysLink(Task& t, GuestAddr oldpath, GuestAddr newpath) {
  return SysLinkat(t, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

Result<uint64_t> SysSymlinkat(Task& t, GuestAddr target_addr, int dirfd, GuestAddr path) {
  std::string target = SENTRY_TRY(t.CopyInString(target_addr));
  At a = SENTRY_TRY(PathAt(t, dirfd, path));
  SENTRY_TRY(V(t).Symlink(a.ctx, target, a.start, a.path));
  return 0;
}

Result<uint64_t> SysSymlink(Task& t, GuestAddr target, GuestAddr path) {
  return SysSymlinkat(t, target, AT_FDCWD, path);
}

// chmod family.
static Result<uint64_t> Chmod(Task& t, const vfs::Context& ctx, const vfs::Path& p,
                              uint32_t mode) {
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrMode;
  r.mode = mode & 07777;
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

Result<uint64_t> SysFchmodat(Task& t, int dirfd, GuestAddr path, uint32_t mode) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path, 0));
  return Chmod(t, ctx, p, mode);
}

Result<uint64_t> SysChmod(Task& t, GuestAddr path, uint32_t mode) {
  return SysFchmodat(t, AT_FDCWD, path, mode);
}

Result<uint64_t> SysFchmod(Task& t, int fd, uint32_t mode) {
  vfs::Path p = SENTRY_TRY(FilePlace(t, fd));
  return Chmod(t, t.VfsContext(), p, mode);
}

// chown family; -1 leaves an id alone.
static Result<uint64_t> Chown(Task& t, const vfs::Context& ctx, const vfs::Path& p,
                              uint32_t uid, uint32_t gid) {
  // The ids are the caller's user namespace's: kernel ids here (EINVAL when unmapped).
  if (const kernel::UserNamespace* ns = t.tg().creds.user_ns.get()) {
    for (auto [id, is_gid] : {std::pair{&uid, false}, std::pair{&gid, true}}) {
      if (*id == UINT32_MAX) continue;
      std::optional<uint32_t> k = kernel::ToKernelId(ns, is_gid, *id);
      if (!k) return Errno(EINVAL);
      *id = *k;
    }
  }
  vfs::SetAttrRequest r;
  if (uid != UINT32_MAX) {
    r.mask |= vfs::kAttrUid;
    r.uid = uid;
  }
  if (gid != UINT32_MAX) {
    r.mask |= vfs::kAttrGid;
    r.gid = gid;
  }
  if (r.mask == 0) return 0;
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

Result<uint64_t> SysFchownat(Task& t, int dirfd, GuestAddr path, uint32_t uid, uint32_t gid,
                             int flags) {
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path, flags));
  return Chown(t, ctx, p, uid, gid);
}

Result<uint64_t> SysChown(Task& t, GuestAddr path, uint32_t uid, uint32_t gid) {
  return SysFchownat(t, AT_FDCWD, path, uid, gid, 0);
}

Result<uint64_t> SysLchown(Task& t, GuestAddr path, uint32_t uid, uint32_t gid) {
  return SysFchownat(t, AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW);
}

Result<uint64_t> SysFchown(Task& t, int fd, uint32_t uid, uint32_t gid) {
  vfs::Path p = SENTRY_TRY(FilePlace(t, fd));
  return Chown(t, t.VfsContext(), p, uid, gid);
}

// utimensat(2): `times` null means now for both; UTIME_OMIT leaves one alone. A null path
// with a dirfd acts on that file (futimens).
Result<uint64_t> SysUtimensat(Task& t, int dirfd, GuestAddr path, GuestAddr times, int flags) {
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Errno(EINVAL);
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrAtime | vfs::kAttrMtime;
  r.atime.tv_nsec = r.mtime.tv_nsec = UTIME_NOW;
  if (!times.IsNull()) {
    struct timespec ts[2];
    SENTRY_TRY(t.CopyInBytes(times, {reinterpret_cast<uint8_t*>(ts), sizeof(ts)}));
    for (auto& x : ts) {
      if (x.tv_nsec != UTIME_NOW && x.tv_nsec != UTIME_OMIT &&
          (x.tv_nsec < 0 || x.tv_nsec >= 1000000000)) {
        return Errno(EINVAL);
      }
    }
    r.atime = ts[0];
    r.mtime = ts[1];
    if (ts[0].tv_nsec == UTIME_OMIT) r.mask &= ~vfs::kAttrAtime;
    if (ts[1].tv_nsec == UTIME_OMIT) r.mask &= ~vfs::kAttrMtime;
  }
  vfs::Context ctx = t.VfsContext();
  vfs::Path p;
  if (path.IsNull()) {
    if (dirfd == AT_FDCWD) return Errno(EFAULT);
    p = SENTRY_TRY(FilePlace(t, dirfd));
  } else {
    p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path, flags));
  }
  if (r.mask == 0) return 0;
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

// utimes/futimesat take struct timeval[2].
Result<uint64_t> SysFutimesat(Task& t, int dirfd, GuestAddr path, GuestAddr times) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path, 0));
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrAtime | vfs::kAttrMtime;
  r.atime.tv_nsec = r.mtime.tv_nsec = UTIME_NOW;
  if (!times.IsNull()) {
    struct timeval tv[2];
    SENTRY_TRY(t.CopyInBytes(times, {reinterpret_cast<uint8_t*>(tv), sizeof(tv)}));
    for (auto& x : tv) {
      if (x.tv_usec < 0 || x.tv_usec >= 1000000) return Errno(EINVAL);
    }
    r.atime = {tv[0].tv_sec, tv[0].tv_usec * 1000};
    r.mtime = {tv[1].tv_sec, tv[1].tv_usec * 1000};
  }
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

Result<uint64_t> SysUtimes(Task& t, GuestAddr path, GuestAddr times) {
  return SysFutimesat(t, AT_FDCWD, path, times);
}

Result<uint64_t> SysUtime(Task& t, GuestAddr path, GuestAddr times) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path, 0));
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrAtime | vfs::kAttrMtime;
  r.atime.tv_nsec = r.mtime.tv_nsec = UTIME_NOW;
  if (!times.IsNull()) {
    int64_t tb[2];
    SENTRY_TRY(t.CopyInBytes(times, {reinterpret_cast<uint8_t*>(tb), sizeof(tb)}));
    r.atime = {tb[0], 0};
    r.mtime = {tb[1], 0};
  }
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

Result<uint64_t> SysTruncate(Task& t, GuestAddr path, int64_t length) {
  if (length < 0) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path, 0));
  // As Linux's vfs_truncate, a caller allowed to write breaks the file's leases first, as an
  // open for writing would (the checks run again in SetAttr and give the errors).
  if (vfs::FileLocks* locks = p.inode()->locks_if_any()) {
    auto st = p.inode()->Stat();
    if (st.ok() && S_ISREG(st->st_mode) && vfs::CheckPermission(ctx.creds, *st, 2).ok()) {
      SENTRY_TRY(locks->BreakLeases(t, nullptr, true, false));
    }
  }
  if (auto st = p.inode()->Stat();
      st.ok() && S_ISREG(st->st_mode) &&
      static_cast<uint64_t>(length) > static_cast<uint64_t>(st->st_size)) {
    SENTRY_TRY(CheckFileSizeLimit(t, length));
  }
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrSize;
  r.size = static_cast<uint64_t>(length);
  SENTRY_TRY(V(t).SetAttr(ctx, p, r));
  return 0;
}

// ftruncate needs a file open for writing; the permission bits no longer matter.
Result<uint64_t> SysFtruncate(Task& t, int fd, int64_t length) {
  if (length < 0) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->inode() || !f->Writable() || !S_ISREG(f->inode()->Type())) return Errno(EINVAL);
  if (f->mount() && f->mount()->read_only()) return Errno(EROFS);
  if (auto st = f->inode()->Stat();
      st.ok() && static_cast<uint64_t>(length) > static_cast<uint64_t>(st->st_size)) {
    SENTRY_TRY(CheckFileSizeLimit(t, length));
  }
  vfs::SetAttrRequest r;
  r.mask = vfs::kAttrSize;
  r.size = static_cast<uint64_t>(length);
  SENTRY_TRY(f->inode()->SetAttr(r));
  vfs::NotifyFile(*f, IN_MODIFY);
  return 0;
}

Result<uint64_t> SysFallocate(Task& t, int fd, int mode, int64_t offset, int64_t len) {
  if (offset < 0 || len <= 0) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->Writable()) return Errno(EBADF);
  if (f->inode() && f->inode()->IsDir()) return Errno(EISDIR);
  if (!f->inode() || !S_ISREG(f->inode()->Type())) return Errno(ESPIPE);
  int64_t end;
  if (!(mode & FALLOC_FL_KEEP_SIZE) && !__builtin_add_overflow(offset, len, &end)) {
    SENTRY_TRY(CheckFileSizeLimit(t, static_cast<uint64_t>(end)));
  }
  SENTRY_TRY(f->Allocate(mode, offset, len));
  vfs::NotifyFile(*f, IN_MODIFY);
  return 0;
}

Result<uint64_t> SysFsync(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  SENTRY_TRY(f->Sync(false));
  return 0;
}

Result<uint64_t> SysFdatasync(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  SENTRY_TRY(f->Sync(true));
  return 0;
}

Result<uint64_t> SysSyncFileRange(Task& t, int fd, int64_t off, int64_t nbytes, unsigned flags) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (f->flags() & O_PATH) return Errno(EBADF);
  constexpr unsigned kValid =
      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
  if (flags & ~kValid) return Errno(EINVAL);
  int64_t end = static_cast<int64_t>(static_cast<uint64_t>(off) + static_cast<uint64_t>(nbytes));
  if (off < 0 || end < 0 || end < off) return Errno(EINVAL);
  struct stat st;
  SENTRY_TRY(f->Stat(&st));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISDIR(st.st_mode) &&
      !S_ISLNK(st.st_mode)) {
    return Errno(ESPIPE);
  }
  // The range is not narrowed: writing the whole file's data back is what fdatasync does,
  // and more than the range is never wrong.
  if (flags & SYNC_FILE_RANGE_WRITE) SENTRY_TRY(f->Sync(/*data_only=*/true));
  return 0;
}

Result<uint64_t> SysSyncfs(Task& t, int fd) {
  SENTRY_TRY(GetFile(t, fd));
  return 0;
}

// Data written to host binds goes to the host page cache at once; sync has nothing to add
// beyond what the host's own writeback does.
Result<uint64_t> SysSync(Task&) { return 0; }

Result<uint64_t> SysStatfs(Task& t, GuestAddr path, GuestAddr buf) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, path, 0));
  struct statfs s = SENTRY_TRY(p.inode()->StatFs());
  if (p.mnt->read_only()) s.f_flags |= ST_RDONLY;
  SENTRY_TRY(t.CopyOut(buf, s));
  return 0;
}

Result<uint64_t> SysFstatfs(Task& t, int fd, GuestAddr buf) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  struct statfs s {};
  if (f->inode()) {
    s = SENTRY_TRY(f->inode()->StatFs());
  } else {
    s.f_type = 0x50495045;  // PIPEFS_MAGIC
    s.f_bsize = 4096;
    s.f_namelen = 255;
  }
  SENTRY_TRY(t.CopyOut(buf, s));
  return 0;
}

// Hints that change nothing the guest can observe.
Result<uint64_t> SysFadvise64(Task& t, int fd, int64_t, int64_t len, int advice) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (len < 0 || advice < 0 || advice > 5) return Errno(EINVAL);
  if (!f->inode()) return Errno(ESPIPE);
  return 0;
}

Result<uint64_t> SysReadahead(Task& t, int fd, int64_t, size_t) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->Readable() || !f->inode() || !S_ISREG(f->inode()->Type())) return Errno(EINVAL);
  return 0;
}

Result<uint64_t> SysNameToHandleAt(Task&, int, GuestAddr, GuestAddr, GuestAddr, int) {
  return Errno(EOPNOTSUPP);
}

// Extended attributes. `follow` distinguishes setxattr from lsetxattr.
namespace {

Result<vfs::Path> XattrTarget(Task& t, GuestAddr path, bool follow) {
  vfs::Context ctx = t.VfsContext();
  return ResolveAt(t, ctx, AT_FDCWD, path, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

// Names are 1 to 255 bytes; longer ones are ERANGE, as Linux's strncpy_from_user into a
// 256-byte buffer.
Result<std::string> CopyInXattrName(Task& t, GuestAddr name_addr) {
  auto name = t.CopyInString(name_addr, XATTR_NAME_MAX + 1);
  if (!name.ok()) return name.error().code() == ENAMETOOLONG ? Errno(ERANGE) : name.error();
  if (name->empty() || name->size() > XATTR_NAME_MAX) return Errno(ERANGE);
  return *name;
}

// Who may read (want 4) or write (want 2) attribute `name` of `p`, as Linux's
// xattr_permission plus the capability module's rule for security.*: trusted.* is for
// CAP_SYS_ADMIN only and invisible to others; user.* lives only on regular files and
// directories (and a sticky directory's only for its owner) and follows the file's mode;
// security.* is readable by all and writable with CAP_SYS_ADMIN.
Result<void> XattrPermission(Task& t, const vfs::Path& p, const std::string& name, int want) {
  vfs::Context ctx = t.VfsContext();
  bool admin = ctx.creds.Capable(CAP_SYS_ADMIN);
  bool write = want & 2;
  if (name.starts_with("security.")) {
    return write && !admin ? Errno(EPERM) : Ok();
  }
  if (name.starts_with("trusted.")) {
    if (!admin) return write ? Errno(EPERM) : Errno(ENODATA);
    return Ok();
  }
  struct stat st = SENTRY_TRY(p.inode()->Stat());
  if (name.starts_with("user.")) {
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      return write ? Errno(EPERM) : Errno(ENODATA);
    }
    if (write && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid != ctx.creds.uid &&
        !admin) {
      return Errno(EPERM);
    }
  }
  return vfs::CheckPermission(ctx.creds, st, want);
}

Result<uint64_t> DoGetxattr(Task& t, const vfs::Path& p, GuestAddr name_addr, GuestAddr value,
                            size_t size) {
  std::string name = SENTRY_TRY(CopyInXattrName(t, name_addr));
  SENTRY_TRY(XattrPermission(t, p, name, 4));
  std::string v = SENTRY_TRY(p.inode()->GetXattr(name));
  if (size == 0) return v.size();
  if (v.size() > size) return Errno(ERANGE);
  SENTRY_TRY(t.CopyOutBytes(value, {reinterpret_cast<const uint8_t*>(v.data()), v.size()}));
  return v.size();
}

Result<uint64_t> DoSetxattr(Task& t, const vfs::Path& p, GuestAddr name_addr, GuestAddr value,
                            size_t size, int flags) {
  if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) return Errno(EINVAL);
  if (size > XATTR_SIZE_MAX) return Errno(E2BIG);
  std::string name = SENTRY_TRY(CopyInXattrName(t, name_addr));
  std::string v(size, '\0');
  SENTRY_TRY(t.CopyInBytes(value, {reinterpret_cast<uint8_t*>(v.data()), size}));
  if (p.mnt->read_only()) return Errno(EROFS);
  SENTRY_TRY(XattrPermission(t, p, name, 2));
  SENTRY_TRY(p.inode()->SetXattr(name, v, flags));
  return 0;
}

Result<uint64_t> DoListxattr(Task& t, const vfs::Path& p, GuestAddr list, size_t size) {
  std::vector<std::string> names = SENTRY_TRY(p.inode()->ListXattr());
  bool admin = t.VfsContext().creds.Capable(CAP_SYS_ADMIN);
  std::string out;
  for (auto& n : names) {
    if (n.starts_with("trusted.") && !admin) continue;  // as Linux's simple_xattr_list
    out += n + '\0';
  }
  if (size == 0) return out.size();
  if (out.size() > size) return Errno(ERANGE);
  SENTRY_TRY(t.CopyOutBytes(list, {reinterpret_cast<const uint8_t*>(out.data()), out.size()}));
  return out.size();
}

Result<uint64_t> DoRemovexattr(Task& t, const vfs::Path& p, GuestAddr name_addr) {
  std::string name = SENTRY_TRY(CopyInXattrName(t, name_addr));
  if (p.mnt->read_only()) return Errno(EROFS);
  SENTRY_TRY(XattrPermission(t, p, name, 2));
  SENTRY_TRY(p.inode()->RemoveXattr(name));
  return 0;
}

}  // namespace

Result<uint64_t> SysGetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value,
                             size_t size) {
  return DoGetxattr(t, SENTRY_TRY(XattrTarget(t, path, true)), name, value, size);
}
Result<uint64_t> SysLgetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value,
                              size_t size) {
  return DoGetxattr(t, SENTRY_TRY(XattrTarget(t, path, false)), name, value, size);
}
Result<uint64_t> SysFgetxattr(Task& t, int fd, GuestAddr name, GuestAddr value, size_t size) {
  return DoGetxattr(t, SENTRY_TRY(FilePlace(t, fd)), name, value, size);
}
Result<uint64_t> SysSetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value,
                             size_t size, int flags) {
  return DoSetxattr(t, SENTRY_TRY(XattrTarget(t, path, true)), name, value, size, flags);
}
Result<uint64_t> SysLsetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value,
                              size_t size, int flags) {
  return DoSetxattr(t, SENTRY_TRY(XattrTarget(t, path, false)), name, value, size, flags);
}
Result<uint64_t> SysFsetxattr(Task& t, int fd, GuestAddr name, GuestAddr value, size_t size,
                              int flags) {
  return DoSetxattr(t, SENTRY_TRY(FilePlace(t, fd)), name, value, size, flags);
}
Result<uint64_t> SysListxattr(Task& t, GuestAddr path, GuestAddr list, size_t size) {
  return DoListxattr(t, SENTRY_TRY(XattrTarget(t, path, true)), list, size);
}
Result<uint64_t> SysLlistxattr(Task& t, GuestAddr path, GuestAddr list, size_t size) {
  return DoListxattr(t, SENTRY_TRY(XattrTarget(t, path, false)), list, size);
}
Result<uint64_t> SysFlistxattr(Task& t, int fd, GuestAddr list, size_t size) {
  return DoListxattr(t, SENTRY_TRY(FilePlace(t, fd)), list, size);
}
Result<uint64_t> SysRemovexattr(Task& t, GuestAddr path, GuestAddr name) {
  return DoRemovexattr(t, SENTRY_TRY(XattrTarget(t, path, true)), name);
}
Result<uint64_t> SysLremovexattr(Task& t, GuestAddr path, GuestAddr name) {
  return DoRemovexattr(t, SENTRY_TRY(XattrTarget(t, path, false)), name);
}
Result<uint64_t> SysFremovexattr(Task& t, int fd, GuestAddr name) {
  return DoRemovexattr(t, SENTRY_TRY(FilePlace(t, fd)), name);
}

}  // namespace sentry::syscalls
