// The gofer's read-only ops and the helpers every op uses.
#include <dirent.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "gofer/server_internal.h"

namespace sentry::gofer {
namespace {

constexpr int kDirOpenFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// The *at() flags that name the fd itself. AT_SYMLINK_NOFOLLOW changes nothing there, but
// with it every *at() call of the server carries the flag, which the Sentry's seccomp
// allowlist can then require in direct mode (runtime-shim/confine.cc).
constexpr int kEmptyPath = AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;

// Opens `name` in `dirfd` as a directory handle fd: for reading if allowed, else O_PATH.
Result<int> OpenDir(int dirfd, const char* name, bool* opath) {
  *opath = false;
  int fd = openat(dirfd, name, kDirOpenFlags);
  if (fd < 0 && errno == EACCES) {
    *opath = true;
    fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return Errno(errno);
  return fd;
}

bool IsDevice(mode_t mode) { return S_ISCHR(mode) || S_ISBLK(mode); }

// Checks what openat actually opened (the host may have swapped the file since it was
// stat'ed) and, unless it is a FIFO, takes the O_NONBLOCK off that the open needed.
// Returns the opened file's attributes.
Result<struct stat> CheckOpened(int fd, int flags) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Errno(errno);
  if (IsDevice(st.st_mode)) return Errno(EPERM);
  if (S_ISDIR(st.st_mode)) return Errno(EISDIR);
  if (!S_ISFIFO(st.st_mode) && fcntl(fd, F_SETFL, flags) != 0) return Errno(errno);
  return st;
}

// Whether `child` lies on another host mount than the directory `dir` it was found in.
// Without mount ids (Linux < 5.8), a different device says so; that also takes a btrfs
// subvolume for a mount.
bool OnOtherMount(const HandleEntry& dir, const HostStat& child) {
  if (dir.mnt_id != 0 && child.mnt_id != 0) return dir.mnt_id != child.mnt_id;
  return dir.dev != child.st.st_dev;
}

bool SameMount(const HostStat& a, const HostStat& b) {
  if (a.mnt_id != 0 && b.mnt_id != 0) return a.mnt_id == b.mnt_id;
  return a.st.st_dev == b.st.st_dev;
}

// What a sealed mount point shows: an empty directory nobody may write, with the identity
// and times of the mount's root.
struct stat SealedStat(struct stat st) {
  st.st_mode = S_IFDIR | 0555;
  st.st_nlink = 2;
  st.st_size = 0;
  st.st_blocks = 0;
  return st;
}

}  // namespace

Result<HostStat> StatAt(int dirfd, const char* name, int flags) {
  struct statx sx;
  if (statx(dirfd, name, flags, STATX_BASIC_STATS | STATX_MNT_ID, &sx) != 0) return Errno(errno);
  HostStat h{};
  struct stat& st = h.st;
  st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  st.st_ino = sx.stx_ino;
  st.st_mode = sx.stx_mode;
  st.st_nlink = sx.stx_nlink;
  st.st_uid = sx.stx_uid;
  st.st_gid = sx.stx_gid;
  st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
  st.st_size = static_cast<off_t>(sx.stx_size);
  st.st_blksize = sx.stx_blksize;
  st.st_blocks = static_cast<blkcnt_t>(sx.stx_blocks);
  st.st_atim = {sx.stx_atime.tv_sec, sx.stx_atime.tv_nsec};
  st.st_mtim = {sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec};
  st.st_ctim = {sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec};
  h.mnt_id = sx.stx_mask & STATX_MNT_ID ? sx.stx_mnt_id : 0;
  return h;
}

bool Server::MayEnter(size_t attach, int fd) const {
  if (attaches_[attach].submounts == Submounts::kNone) return false;
  struct statfs sfs;
  return fstatfs(fd, &sfs) == 0 && IsPersistentFs(sfs.f_type);
}

bool Server::MayEnterAt(const HandleEntry& dir, const char* name) const {
  if (attaches_[dir.attach].submounts == Submounts::kNone) return false;
  // O_PATH without O_DIRECTORY: an automount point is not mounted by this open.
  int fd = openat(dir.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = MayEnter(dir.attach, fd);
  close(fd);
  return ok;
}

Result<void> Server::CheckOpenedMount(const HandleEntry& e, int fd, const struct stat& st) {
  const HandleEntry& dir = table_.ParentOf(e);
  if (st.st_dev == dir.dev) return Ok();  // the common case, without a system call
  HostStat opened = SENTRY_TRY(StatAt(fd, "", kEmptyPath));
  if (OnOtherMount(dir, opened) && !MayEnter(dir.attach, fd)) return Errno(EACCES);
  return Ok();
}

Result<void> Server::CheckNotHidden(int dirfd, const std::string& name) const {
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && Hidden(st)) {
    return Errno(ENOENT);
  }
  return Ok();
}

Result<void> CheckName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
    return Errno(EINVAL);
  }
  return Ok();
}

Result<HandleEntry*> Server::Lookup(Handle h) {
  HandleEntry* e = table_.Get(h);
  if (e == nullptr) return Errno(EBADF);
  return e;
}

Result<HandleEntry*> Server::LookupDir(Handle h) {
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  if (!e->is_dir) return Errno(ENOTDIR);
  return e;
}

Result<void> Server::CheckWritable(const HandleEntry& e) {
  if (attaches_[e.attach].read_only || e.sealed) return Errno(EROFS);
  if (opts_.protected_files.empty()) return Ok();
  std::pair<dev_t, ino_t> id{e.dev, e.ino};
  if (!e.is_dir) {
    struct stat st;
    if (e.name.empty() ||
        fstatat(table_.ParentOf(e).fd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Ok();  // gone: the op itself fails
    }
    id = {st.st_dev, st.st_ino};
  }
  if (opts_.protected_files.count(id) != 0) return Errno(EROFS);
  return Ok();
}

Result<void> Server::CheckNameWritable(const HandleEntry& dir, const std::string& name) const {
  if (opts_.protected_names.count({dir.dev, dir.ino, name}) != 0) return Errno(EROFS);
  struct stat st;
  if (!opts_.protected_files.empty() &&
      fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      opts_.protected_files.count({st.st_dev, st.st_ino}) != 0) {
    return Errno(EROFS);
  }
  return Ok();
}

Result<AtTarget> Server::Target(const HandleEntry& e) {
  if (e.sealed) return Errno(EROFS);  // callers that only read handle sealed entries first
  if (e.is_dir) return AtTarget{e.fd, "", kEmptyPath};
  if (e.name.empty()) return Errno(ENOENT);  // removed or replaced
  return AtTarget{table_.ParentOf(e).fd, e.name.c_str(), AT_SYMLINK_NOFOLLOW};
}

Result<struct stat> Server::StatOf(const HandleEntry& e) {
  if (e.sealed) return *e.sealed;
  AtTarget at = SENTRY_TRY(Target(e));
  struct stat st;
  if (fstatat(at.dirfd, at.name, &st, at.flags) != 0) return Errno(errno);
  return st;
}

// A mount point is checked twice: by name before opening it (so that nothing inside is
// opened and no automount is triggered), and on the opened fd (the host may have mounted
// something there in between). Either check that fails seals the handle.
Result<struct stat> Server::AddChild(Handle dir, const std::string& name, Writer& out) {
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  if (d->sealed) return Errno(ENOENT);
  HostStat child = SENTRY_TRY(StatAt(d->fd, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT));
  if (Hidden(child.st)) return Errno(ENOENT);
  struct stat st = child.st;
  bool sealed = OnOtherMount(*d, child) && !MayEnterAt(*d, name.c_str());
  if (sealed && !S_ISDIR(st.st_mode)) return Errno(EACCES);  // a file mounted over a file
  Handle h;
  if (sealed) {
    st = SealedStat(st);
    h = table_.AddSealedDir(st, d->attach);
  } else if (S_ISDIR(st.st_mode)) {
    bool opath;
    int fd = SENTRY_TRY(OpenDir(d->fd, name.c_str(), &opath));
    Result<HostStat> opened = StatAt(fd, "", kEmptyPath);
    if (!opened.ok()) {
      close(fd);
      return opened.error();
    }
    st = opened->st;
    if (Hidden(st)) {  // swapped in by the host after the stat above
      close(fd);
      return Errno(ENOENT);
    }
    if (!SameMount(child, *opened) && OnOtherMount(*d, *opened) && !MayEnter(d->attach, fd)) {
      close(fd);
      st = SealedStat(st);
      h = table_.AddSealedDir(st, d->attach);
    } else {
      h = table_.AddDir(fd, opath, st, opened->mnt_id, d->attach);
    }
  } else {
    h = table_.AddFile(dir, name, !attaches_[d->attach].read_only);
  }
  out.U64(h).Raw(st);
  return st;
}

Result<void> Server::Attach(Reader& in, Writer& out) {
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  for (size_t i = 0; i < attaches_.size(); i++) {
    if (attaches_[i].name != name) continue;
    bool opath;
    int fd = SENTRY_TRY(OpenDir(attaches_[i].fd, ".", &opath));
    Result<HostStat> root = StatAt(fd, "", kEmptyPath);
    if (!root.ok()) {
      close(fd);
      return root.error();
    }
    out.U64(table_.AddDir(fd, opath, root->st, root->mnt_id, i))
        .Raw(root->st)
        .U8(attaches_[i].read_only);
    return Ok();
  }
  return Errno(ENOENT);
}

// The fd is a fresh open file of the root (its own offset), never the one the gofer serves
// from; a directory the gofer could open only with O_PATH goes as an O_PATH fd.
Result<void> Server::DonateRoot(Reader& in, Writer& out) {
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  for (const AttachPoint& a : attaches_) {
    if (a.name != name) continue;
    bool opath;
    reply_fd_ = SENTRY_TRY(OpenDir(a.fd, ".", &opath));
    out.U8(a.read_only).U8(a.submounts == Submounts::kNone ? 1 : 0);
    return Ok();
  }
  return Errno(ENOENT);
}

Result<void> Server::Walk(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  SENTRY_TRY(CheckName(name));
  SENTRY_TRY(AddChild(dir, name, out));
  return Ok();
}

Result<void> Server::WalkOpen(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  SENTRY_TRY(CheckName(name));
  struct stat st = SENTRY_TRY(AddChild(dir, name, out));
  if (!S_ISREG(st.st_mode)) return Ok();
  // The walk stands whatever the open does: a file the host will not open (or that changed
  // since fstatat) simply comes without an fd, and the Sentry's own kOpen reports why.
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  int fd = openat(d->fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Ok();
  struct stat opened;
  if (fstat(fd, &opened) != 0 || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino ||
      !S_ISREG(opened.st_mode) || fcntl(fd, F_SETFL, O_RDONLY) != 0) {
    close(fd);
    return Ok();
  }
  reply_fd_ = fd;
  return Ok();
}

Result<void> Server::Stat(Reader& in, Writer& out) {
  Handle h = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  out.Raw(SENTRY_TRY(StatOf(*e)));
  return Ok();
}

Result<void> Server::Open(Reader& in, Writer& /*out*/) {
  Handle h = in.U64();
  int flags = in.I32() & (O_ACCMODE | O_TRUNC | O_APPEND);
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  if (e->is_dir) return Errno(EISDIR);
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) SENTRY_TRY(CheckWritable(*e));
  struct stat st = SENTRY_TRY(StatOf(*e));
  if (IsDevice(st.st_mode)) return Errno(EPERM);  // host devices stay out of reach
  if (S_ISLNK(st.st_mode)) return Errno(ELOOP);
  AtTarget at = SENTRY_TRY(Target(*e));
  // O_NONBLOCK: the gofer never waits for a FIFO's peer, even if the file became a FIFO
  // after fstatat. A FIFO keeps the flag (the Sentry may clear it); other files lose it.
  int fd = openat(at.dirfd, at.name, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Errno(errno);
  reply_fd_ = fd;  // closed by HandleRequest if this fails
  struct stat opened = SENTRY_TRY(CheckOpened(fd, flags));
  SENTRY_TRY(CheckOpenedMount(*e, fd, opened));
  // Whoever writes through the fd (the Sentry) may keep set-ID bits a write would clear.
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) SENTRY_TRY(ClearSetId(*mut_, fd, opened));
  return Ok();
}

Result<void> Server::ReadLink(Reader& in, Writer& out) {
  Handle h = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  if (e->is_dir) return Errno(EINVAL);
  AtTarget at = SENTRY_TRY(Target(*e));
  char buf[PATH_MAX];
  ssize_t n = readlinkat(at.dirfd, at.name, buf, sizeof(buf));
  if (n < 0) return Errno(errno);
  out.Str(std::string_view(buf, static_cast<size_t>(n)));
  return Ok();
}

Result<void> Server::ReadDir(Reader& in, Writer& out) {
  Handle h = in.U64();
  uint64_t offset = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(h));
  if (d->sealed) {
    out.U8(1).U64(offset).U32(0);
    return Ok();
  }
  // A fresh open file per page: its offset is ours alone and O_PATH handles work too.
  int fd = openat(d->fd, ".", kDirOpenFlags);
  if (fd < 0) return Errno(errno);
  char* buf = Scratch(kReadDirChunk);
  ssize_t n = -1;
  if (lseek(fd, static_cast<off_t>(offset), SEEK_SET) >= 0) {
    n = syscall(SYS_getdents64, fd, buf, kReadDirChunk);
  }
  int err = errno;
  close(fd);
  if (n < 0) return Errno(err);
  Writer entries;
  uint32_t count = 0;
  uint64_t next = offset;
  for (ssize_t pos = 0; pos < n;) {
    struct dirent64 ent;  // copied out: records are not aligned for the header fields
    memcpy(&ent, buf + pos, offsetof(struct dirent64, d_name));
    const char* name = buf + pos + offsetof(struct dirent64, d_name);
    if (ent.d_reclen == 0) break;
    pos += ent.d_reclen;
    next = static_cast<uint64_t>(ent.d_off);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    struct stat id {};
    id.st_dev = d->dev;
    id.st_ino = ent.d_ino;
    if (Hidden(id)) continue;
    entries.Str(name).U64(ent.d_ino).U8(ent.d_type);
    count++;
  }
  out.U8(n == 0).U64(next).U32(count).Bytes(entries.data());
  return Ok();
}

Result<void> Server::StatFs(Reader& in, Writer& out) {
  Handle h = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  struct statfs sfs;
  if (e->sealed) {
    // Nothing of the file system behind it: an empty, read-only one.
    memset(&sfs, 0, sizeof(sfs));
    sfs.f_bsize = sfs.f_frsize = 4096;
    sfs.f_namelen = NAME_MAX;
    sfs.f_flags = ST_RDONLY;
    out.Raw(sfs);
    return Ok();
  }
  // A non-directory is assumed to live on its directory's file system.
  int fd = e->is_dir ? e->fd : table_.ParentOf(*e).fd;
  if (fstatfs(fd, &sfs) != 0) return Errno(errno);
  out.Raw(sfs);
  return Ok();
}

Result<int> Server::XattrFd(const HandleEntry& e, bool* owned) {
  *owned = false;
  if (e.sealed) return Errno(EOPNOTSUPP);
  if (e.is_dir) {
    if (!e.opath) return e.fd;
    int fd = openat(e.fd, ".", kDirOpenFlags);
    if (fd < 0) return Errno(errno);
    *owned = true;
    return fd;
  }
  struct stat st = SENTRY_TRY(StatOf(e));
  if (!S_ISREG(st.st_mode)) return Errno(EOPNOTSUPP);
  AtTarget at = SENTRY_TRY(Target(e));
  int fd = openat(at.dirfd, at.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Errno(errno);
  *owned = true;
  return fd;
}

Result<void> Server::GetXattr(Reader& in, Writer& out) {
  Handle h = in.U64();
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  bool owned;
  Result<int> fd = XattrFd(*e, &owned);
  if (!fd.ok()) return fd.error().code() == EOPNOTSUPP ? Errno(ENODATA) : fd.error();
  char* buf = Scratch(XATTR_SIZE_MAX);
  ssize_t n = fgetxattr(*fd, name.c_str(), buf, XATTR_SIZE_MAX);
  int err = errno;
  if (owned) close(*fd);
  if (n < 0) return Errno(err);
  out.Str(std::string_view(buf, static_cast<size_t>(n)));
  return Ok();
}

Result<void> Server::ListXattr(Reader& in, Writer& out) {
  Handle h = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  bool owned;
  Result<int> fd = XattrFd(*e, &owned);
  if (!fd.ok() && fd.error().code() == EOPNOTSUPP) {
    out.Str("");  // symlinks and special files: no xattrs to show
    return Ok();
  }
  if (!fd.ok()) return fd.error();
  char* buf = Scratch(XATTR_LIST_MAX);
  ssize_t n = flistxattr(*fd, buf, XATTR_LIST_MAX);
  int err = errno;
  if (owned) close(*fd);
  if (n < 0) return Errno(err);
  out.Str(std::string_view(buf, static_cast<size_t>(n)));
  return Ok();
}

}  // namespace sentry::gofer
