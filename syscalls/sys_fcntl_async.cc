// fcntl's signal-driven I/O commands (F_SETOWN, F_SETOWN_EX, F_SETSIG and their getters,
// O_ASYNC through F_SETFL and FIOASYNC) and leases (F_SETLEASE, F_GETLEASE).
#include <signal.h>
#include <sys/ioctl.h>

#include "syscalls/common.h"
#include "syscalls/fcntl_async.h"
#include "vfs/async.h"
#include "vfs/lock.h"

namespace sentry::syscalls {

namespace {

// Linux's find_vpid: an id names something while a task has it as its tid, or a process
// group still uses it.
// `id` is global (the caller's number translated; 0 when it has none).
bool IdInUse(Task& t, int id) {
  absl::MutexLock l(&t.kernel().mu());
  if (id <= 0) return false;
  if (t.kernel().TaskByTid(id) != nullptr) return true;
  for (kernel::ThreadGroup* g : t.kernel().AllGroups()) {
    if (g->pgid == id) return true;
  }
  return false;
}

Result<void> SetOwner(Task& t, const vfs::FileRef& f, vfs::FileOwner::Kind kind, int id) {
  // The owner is kept by its global pid; the caller names it in its PID namespace.
  int global = id == 0 ? 0 : t.GlobalPid(id);
  if (id != 0 && !IdInUse(t, global)) return Errno(ESRCH);
  vfs::FileOwner o;
  o.kind = kind;
  o.id = global;
  {
    absl::MutexLock l(&t.kernel().mu());
    o.uid = t.tg().creds.ruid;
    o.euid = t.tg().creds.euid;
  }
  f->async().set_owner(o);
  return Ok();
}

// F_SETOWN: a positive id is a process, a negative one a process group.
Result<uint64_t> SetOwnerLegacy(Task& t, const vfs::FileRef& f, int who) {
  if (who == INT32_MIN) return Errno(EINVAL);
  auto kind = who < 0 ? vfs::FileOwner::Kind::kPgrp : vfs::FileOwner::Kind::kPid;
  SENTRY_TRY(SetOwner(t, f, kind, who < 0 ? -who : who));
  return 0;
}

Result<uint64_t> SetOwnerEx(Task& t, const vfs::FileRef& f, GuestAddr arg) {
  struct f_owner_ex ex = SENTRY_TRY(t.CopyIn<struct f_owner_ex>(arg));
  vfs::FileOwner::Kind kind;
  switch (ex.type) {
    case F_OWNER_TID:
      kind = vfs::FileOwner::Kind::kTid;
      break;
    case F_OWNER_PID:
      kind = vfs::FileOwner::Kind::kPid;
      break;
    case F_OWNER_PGRP:
      kind = vfs::FileOwner::Kind::kPgrp;
      break;
    default:
      return Errno(EINVAL);
  }
  SENTRY_TRY(SetOwner(t, f, kind, ex.pid));
  return 0;
}

Result<uint64_t> GetOwnerEx(Task& t, const vfs::FileRef& f, GuestAddr arg) {
  vfs::FileOwner o = f->async().owner();
  struct f_owner_ex ex {};
  ex.pid = t.LocalPid(o.id);
  switch (o.kind) {
    case vfs::FileOwner::Kind::kTid:
      ex.type = F_OWNER_TID;
      break;
    case vfs::FileOwner::Kind::kPid:
      ex.type = F_OWNER_PID;
      break;
    case vfs::FileOwner::Kind::kPgrp:
      ex.type = F_OWNER_PGRP;
      break;
  }
  SENTRY_TRY(t.CopyOut(arg, ex));
  return 0;
}

}  // namespace

Result<void> SetAsyncFlag(const vfs::FileRef& f, int fd, bool on, bool ioctl) {
  bool was = f->flags() & O_ASYNC;
  if (was == on) return Ok();
  // The flag is the state of the file's fasync operation, which only some files have; the
  // others keep it as it is (ioctl's FIOASYNC says ENOTTY).
  if (!f->SignalsAsync()) return ioctl ? Errno(ENOTTY) : Ok();
  if (on) {
    f->async().Enable(f, fd);
    f->SetAsyncFlag(true);
  } else if (f->async().Disable()) {
    // Only an armed watch clears the flag: one given to open(2) never armed anything, so
    // it stays, as on Linux.
    f->SetAsyncFlag(false);
  }
  return Ok();
}

Result<uint64_t> FcntlSetFl(const vfs::FileRef& f, int fd, int flags) {
  f->SetStatusFlags(flags);
  SENTRY_TRY(SetAsyncFlag(f, fd, flags & O_ASYNC, false));
  return 0;
}

Result<uint64_t> FcntlAsync(Task& t, const vfs::FileRef& f, int cmd, uint64_t arg) {
  switch (cmd) {
    case F_SETOWN:
      return SetOwnerLegacy(t, f, static_cast<int>(arg));
    case F_GETOWN: {
      vfs::FileOwner o = f->async().owner();
      int local = t.LocalPid(o.id);
      int id = o.kind == vfs::FileOwner::Kind::kPgrp ? -local : local;
      return static_cast<uint64_t>(static_cast<int64_t>(id));
    }
    case F_SETOWN_EX:
      return SetOwnerEx(t, f, GuestAddr(arg));
    case F_GETOWN_EX:
      return GetOwnerEx(t, f, GuestAddr(arg));
    case F_SETSIG:
      if (arg > abi::kNumSignals) return Errno(EINVAL);
      f->async().set_signal(static_cast<int>(arg));
      return 0;
    case F_GETSIG:
      return static_cast<uint64_t>(f->async().signal());
    default:
      return Errno(EINVAL);
  }
}

Result<uint64_t> FcntlLease(Task& t, const vfs::FileRef& f, int fd, int cmd, uint64_t arg) {
  const vfs::InodeRef& ino = f->inode();
  if (cmd == F_GETLEASE) {
    vfs::FileLocks* locks = ino ? ino->locks_if_any() : nullptr;
    return static_cast<uint64_t>(locks ? locks->GetLease(f.get()) : F_UNLCK);
  }
  if (f->flags() & O_PATH) return Errno(EBADF);
  if (!ino) return Errno(EINVAL);  // pipes and other anonymous files are not regular files
  struct stat st = SENTRY_TRY(ino->Stat());
  vfs::Context ctx = t.VfsContext();
  // The file's owner, or CAP_LEASE.
  if (st.st_uid != ctx.creds.uid && !ctx.creds.Capable(CAP_LEASE)) return Errno(EACCES);
  if (!S_ISREG(st.st_mode)) return Errno(EINVAL);
  int type = static_cast<int>(arg);
  bool self_write = f->Writable();
  bool self_read = !self_write && f->Readable();
  SENTRY_TRY(ino->locks().SetLease(f.get(), &f->async(), fd, type, ino->write_opens().load(),
                                   ino->read_only_opens().load(), self_write, self_read));
  if (type != F_UNLCK) {
    vfs::FileOwner o;
    o.kind = vfs::FileOwner::Kind::kPid;
    absl::MutexLock l(&t.kernel().mu());
    o.id = t.tg().tgid;
    o.uid = t.tg().creds.ruid;
    o.euid = t.tg().creds.euid;
    f->async().SetOwnerIfNone(o);
  }
  return 0;
}

}  // namespace sentry::syscalls
