// stat family.
#include <linux/stat.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

Result<void> StatAt(Task& t, int dirfd, GuestAddr path_addr, int flags, struct stat* st) {
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if (path.empty() && (flags & AT_EMPTY_PATH) && dirfd != AT_FDCWD) {
    auto f = SENTRY_TRY(GetFile(t, dirfd));
    return f->Stat(st);
  }
  vfs::Context ctx = t.VfsContext();
  if (path.empty()) {
    vfs::Path p = SENTRY_TRY(ResolveAt(t, ctx, dirfd, path_addr, flags));
    *st = SENTRY_TRY(p.inode()->Stat());
    return Ok();
  }
  vfs::Path start = SENTRY_TRY(StartAt(t, ctx, dirfd, path));
  vfs::FileRef magic;
  vfs::Path p = SENTRY_TRY(
      t.kernel().vfs().Resolve(ctx, start, path, !(flags & AT_SYMLINK_NOFOLLOW), &magic));
  if (magic) return magic->Stat(st);  // /dev/fd/N of a pipe: the pipe itself
  *st = SENTRY_TRY(p.inode()->Stat());
  return Ok();
}

// st_uid/st_gid as the caller's user namespace sees them (65534 when unmapped).
void ShowOwner(Task& t, struct stat* st) {
  const kernel::UserNamespace* ns = t.tg().creds.user_ns.get();
  if (!ns) return;
  st->st_uid = kernel::ShowId(ns, false, st->st_uid);
  st->st_gid = kernel::ShowId(ns, true, st->st_gid);
}

}  // namespace

Result<uint64_t> SysFstat(Task& t, int fd, GuestAddr buf) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  struct stat st;
  SENTRY_TRY(f->Stat(&st));
  ShowOwner(t, &st);
  SENTRY_TRY(t.CopyOut(buf, st));
  return 0;
}

Result<uint64_t> SysNewfstatat(Task& t, int dirfd, GuestAddr path, GuestAddr buf, int flags) {
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)) return Errno(EINVAL);
  struct stat st;
  SENTRY_TRY(StatAt(t, dirfd, path, flags, &st));
  ShowOwner(t, &st);
  SENTRY_TRY(t.CopyOut(buf, st));
  return 0;
}

Result<uint64_t> SysStat(Task& t, GuestAddr path, GuestAddr buf) {
  return SysNewfstatat(t, AT_FDCWD, path, buf, 0);
}

Result<uint64_t> SysLstat(Task& t, GuestAddr path, GuestAddr buf) {
  return SysNewfstatat(t, AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}

Result<uint64_t> SysStatx(Task& t, int dirfd, GuestAddr path, int flags, uint32_t mask,
                          GuestAddr buf) {
  if (mask & STATX__RESERVED) return Errno(EINVAL);
  constexpr int kSyncMask = AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC;
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | kSyncMask)) {
    return Errno(EINVAL);
  }
  if ((flags & kSyncMask) == kSyncMask) return Errno(EINVAL);
  struct stat st;
  SENTRY_TRY(StatAt(t, dirfd, path, flags, &st));
  ShowOwner(t, &st);
  struct statx sx;
  memset(&sx, 0, sizeof(sx));
  sx.stx_mask = STATX_BASIC_STATS;
  sx.stx_blksize = st.st_blksize;
  sx.stx_nlink = st.st_nlink;
  sx.stx_uid = st.st_uid;
  sx.stx_gid = st.st_gid;
  sx.stx_mode = st.st_mode;
  sx.stx_ino = st.st_ino;
  sx.stx_size = st.st_size;
  sx.stx_blocks = st.st_blocks;
  sx.stx_atime = {st.st_atim.tv_sec, static_cast<uint32_t>(st.st_atim.tv_nsec), 0};
  sx.stx_mtime = {st.st_mtim.tv_sec, static_cast<uint32_t>(st.st_mtim.tv_nsec), 0};
  sx.stx_ctime = {st.st_ctim.tv_sec, static_cast<uint32_t>(st.st_ctim.tv_nsec), 0};
  sx.stx_rdev_major = major(st.st_rdev);
  sx.stx_rdev_minor = minor(st.st_rdev);
  sx.stx_dev_major = major(st.st_dev);
  sx.stx_dev_minor = minor(st.st_dev);
  SENTRY_TRY(t.CopyOut(buf, sx));
  return 0;
}

}  // namespace sentry::syscalls
