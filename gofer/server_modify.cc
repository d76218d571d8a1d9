// The gofer's ops that change the host file system. Each checks the read-only flag of the
// attach point before touching anything, and makes its changes through mut_ (Mutations,
// server_internal.h): this process's own calls in the gofer, the gofer's on lent fds when
// the server runs in the Sentry.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>

#include "gofer/server_internal.h"

namespace sentry::gofer {
namespace {

Result<void> Done(int err) {
  if (err != 0) return Errno(err);
  return Ok();
}

Result<void> Truncate(Mutations& m, const AtTarget& at, const struct stat& st, uint64_t size) {
  if (S_ISDIR(st.st_mode)) return Errno(EISDIR);
  if (!S_ISREG(st.st_mode)) return Errno(EINVAL);
  int fd = openat(at.dirfd, at.name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Errno(errno);
  struct stat opened;
  Result<void> r = Ok();
  if (fstat(fd, &opened) != 0) {
    r = Errno(errno);
  } else {
    r = ClearSetId(m, fd, opened);
  }
  if (r.ok() && ftruncate(fd, static_cast<off_t>(size)) != 0) r = Errno(errno);
  close(fd);
  return r;
}

Result<void> SetTimes(Mutations& m, const AtTarget& at, const SetAttrRequest& req) {
  struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
  if (req.mask & kSetAtime) ts[0] = req.atime;
  if (req.mask & kSetMtime) ts[1] = req.mtime;
  return Done(m.Utimes(at.dirfd, at.name, ts, at.flags));
}

}  // namespace

Result<void> ClearSetId(Mutations& m, int fd, const struct stat& st) {
  mode_t kill = S_ISUID;
  if (st.st_mode & S_IXGRP) kill |= S_ISGID;
  if (!S_ISREG(st.st_mode) || (st.st_mode & kill) == 0) return Ok();
  return Done(m.ClearBits(fd, st.st_mode & 07777 & ~kill));
}

// Without CAP_CHOWN the file keeps the gofer's ids, which is the best an unprivileged gofer
// can do. A file that has the ids already needs no call (nor, in the Sentry, a round trip).
Result<void> Server::ChownNew(int dirfd, const char* name, uint32_t uid, uint32_t gid) {
  if (opts_.owner) {
    if (!chown_to_owner_) return Ok();  // the gofer runs as the owner: the file is theirs
    uid = opts_.owner->uid;
    gid = opts_.owner->gid;
  }
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == uid && st.st_gid == gid) {
    return Ok();
  }
  int err = mut_->Chown(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
  if (err != 0 && err != EPERM) return Errno(err);
  return Ok();
}

Result<void> Server::Create(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  int flags = in.I32();
  uint32_t mode = in.U32(), uid = in.U32(), gid = in.U32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  SENTRY_TRY(CheckName(name));
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  int oflags =
      (flags & (O_ACCMODE | O_APPEND)) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  int fd = openat(d->fd, name.c_str(), oflags, HostMode(false, mode));
  if (fd < 0) return Errno(errno);
  struct stat st;
  Result<void> owned = ChownNew(d->fd, name.c_str(), uid, gid);
  if (!owned.ok() || fstat(fd, &st) != 0) {
    int err = owned.ok() ? errno : owned.error().code();
    close(fd);
    mut_->Unlink(d->fd, name.c_str(), 0);
    return Errno(err);
  }
  out.U64(table_.AddFile(dir, name)).Raw(st);
  reply_fd_ = fd;
  return Ok();
}

Result<void> Server::Mkdir(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  uint32_t mode = in.U32(), uid = in.U32(), gid = in.U32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  SENTRY_TRY(CheckName(name));
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  SENTRY_TRY(Done(mut_->Mkdir(d->fd, name.c_str(), HostMode(true, mode))));
  SENTRY_TRY(ChownNew(d->fd, name.c_str(), uid, gid));
  SENTRY_TRY(AddChild(dir, name, out));
  return Ok();
}

Result<void> Server::Symlink(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  std::string target = in.Str();
  uint32_t uid = in.U32(), gid = in.U32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  SENTRY_TRY(CheckName(name));
  if (target.empty()) return Errno(ENOENT);
  if (target.find('\0') != std::string::npos) return Errno(EINVAL);
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  SENTRY_TRY(Done(mut_->Symlink(target.c_str(), d->fd, name.c_str())));
  SENTRY_TRY(ChownNew(d->fd, name.c_str(), uid, gid));
  SENTRY_TRY(AddChild(dir, name, out));
  return Ok();
}

Result<void> Server::Mknod(Reader& in, Writer& out) {
  Handle dir = in.U64();
  std::string name = in.Str();
  uint32_t mode = in.U32(), uid = in.U32(), gid = in.U32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  SENTRY_TRY(CheckName(name));
  mode_t type = (mode & S_IFMT) == 0 ? S_IFREG : (mode & S_IFMT);
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) return Errno(EPERM);
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  SENTRY_TRY(Done(mut_->Mknod(d->fd, name.c_str(), type | HostMode(false, mode))));
  SENTRY_TRY(ChownNew(d->fd, name.c_str(), uid, gid));
  SENTRY_TRY(AddChild(dir, name, out));
  return Ok();
}

Result<void> Server::Link(Reader& in, Writer& /*out*/) {
  Handle dir = in.U64();
  std::string name = in.Str();
  Handle target = in.U64();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  HandleEntry* t = SENTRY_TRY(Lookup(target));
  SENTRY_TRY(CheckName(name));
  if (t->is_dir) return Errno(EPERM);
  if (t->attach != d->attach) return Errno(EXDEV);
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  AtTarget at = SENTRY_TRY(Target(*t));
  return Done(mut_->Link(at.dirfd, at.name, d->fd, name.c_str()));
}

Result<void> Server::Unlink(Reader& in, Writer& /*out*/) {
  Handle dir = in.U64();
  std::string name = in.Str();
  int flags = in.I32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* d = SENTRY_TRY(LookupDir(dir));
  SENTRY_TRY(CheckName(name));
  if (flags & ~AT_REMOVEDIR) return Errno(EINVAL);
  SENTRY_TRY(CheckWritable(*d));
  SENTRY_TRY(CheckNameWritable(*d, name));
  SENTRY_TRY(CheckNotHidden(d->fd, name));
  SENTRY_TRY(Done(mut_->Unlink(d->fd, name.c_str(), flags)));
  table_.Removed(*d, name);
  return Ok();
}

Result<void> Server::Rename(Reader& in, Writer& /*out*/) {
  Handle old_dir = in.U64();
  std::string old_name = in.Str();
  Handle new_dir = in.U64();
  std::string new_name = in.Str();
  unsigned flags = in.U32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* od = SENTRY_TRY(LookupDir(old_dir));
  HandleEntry* nd = SENTRY_TRY(LookupDir(new_dir));
  SENTRY_TRY(CheckName(old_name));
  SENTRY_TRY(CheckName(new_name));
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) return Errno(EINVAL);
  if (od->attach != nd->attach) return Errno(EXDEV);
  SENTRY_TRY(CheckWritable(*od));
  SENTRY_TRY(CheckWritable(*nd));
  SENTRY_TRY(CheckNameWritable(*od, old_name));
  SENTRY_TRY(CheckNameWritable(*nd, new_name));
  SENTRY_TRY(CheckNotHidden(od->fd, old_name));
  SENTRY_TRY(CheckNotHidden(nd->fd, new_name));
  // Renaming a file onto another name of itself succeeds and changes nothing.
  struct stat a, b;
  bool same = fstatat(od->fd, old_name.c_str(), &a, AT_SYMLINK_NOFOLLOW) == 0 &&
              fstatat(nd->fd, new_name.c_str(), &b, AT_SYMLINK_NOFOLLOW) == 0 &&
              a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  SENTRY_TRY(Done(mut_->Rename(od->fd, old_name.c_str(), nd->fd, new_name.c_str(), flags)));
  if (!same) {
    table_.Renamed(old_dir, old_name, new_dir, new_name, flags & RENAME_EXCHANGE);
  }
  return Ok();
}

Result<void> Server::SetAttr(Reader& in, Writer& out) {
  Handle h = in.U64();
  auto req = in.Raw<SetAttrRequest>();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  SENTRY_TRY(CheckWritable(*e));
  AtTarget at = SENTRY_TRY(Target(*e));
  struct stat st = SENTRY_TRY(StatOf(*e));
  // Owner first: chown clears set-id bits that a mode in the same request may set again.
  // With a fixed owner, a chown succeeds without changing the host file.
  if ((req.mask & (kSetUid | kSetGid)) && !opts_.owner) {
    uid_t uid = req.mask & kSetUid ? req.uid : static_cast<uid_t>(-1);
    gid_t gid = req.mask & kSetGid ? req.gid : static_cast<gid_t>(-1);
    SENTRY_TRY(Done(mut_->Chown(at.dirfd, at.name, uid, gid, at.flags)));
  }
  if (req.mask & kSetMode) {
    // chmod never follows a symlink (EOPNOTSUPP on one, like Linux's lchmod).
    SENTRY_TRY(Done(
        mut_->Chmod(at.dirfd, at.name, HostMode(S_ISDIR(st.st_mode), req.mode), at.flags, st)));
  }
  if (req.mask & kSetSize) SENTRY_TRY(Truncate(*mut_, at, st, req.size));
  // Times last: truncating moves mtime.
  if (req.mask & (kSetAtime | kSetMtime)) SENTRY_TRY(SetTimes(*mut_, at, req));
  out.Raw(SENTRY_TRY(StatOf(*e)));
  return Ok();
}

Result<void> Server::SetXattr(Reader& in, Writer& /*out*/) {
  Handle h = in.U64();
  std::string name = in.Str();
  std::string value = in.Str();
  int flags = in.I32();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  SENTRY_TRY(CheckWritable(*e));
  // File capabilities are set-ID bits by another name. (The gofer also lacks CAP_SETFCAP.)
  if (name == "security.capability") return Errno(EPERM);
  bool owned;
  Result<int> fd = XattrFd(*e, &owned);
  // Linux allows user.* attributes on regular files and directories only.
  if (!fd.ok()) return fd.error().code() == EOPNOTSUPP ? Errno(EPERM) : fd.error();
  int err = mut_->SetXattr(*fd, name.c_str(), value, flags);
  if (owned) close(*fd);
  return Done(err);
}

Result<void> Server::RemoveXattr(Reader& in, Writer& /*out*/) {
  Handle h = in.U64();
  std::string name = in.Str();
  SENTRY_TRY(EndOfArgs(in));
  HandleEntry* e = SENTRY_TRY(Lookup(h));
  SENTRY_TRY(CheckWritable(*e));
  bool owned;
  Result<int> fd = XattrFd(*e, &owned);
  if (!fd.ok()) return fd.error().code() == EOPNOTSUPP ? Errno(EPERM) : fd.error();
  int err = mut_->RemoveXattr(*fd, name.c_str());
  if (owned) close(*fd);
  return Done(err);
}

}  // namespace sentry::gofer
