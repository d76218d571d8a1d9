// System V IPC: shmget, shmat, shmdt, shmctl, semget, semop, semtimedop, semctl, msgget,
// msgsnd, msgrcv, msgctl. The objects live in sentry/kernel/ipc*.cc.
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>

#include "syscalls/common.h"

namespace sentry::syscalls {

// The caller's IPC namespace.
static kernel::IpcNamespace& Ipc(Task& t) { return *t.ns().ipc->ipc; }

Result<uint64_t> SysShmget(Task& t, int32_t key, uint64_t size, int flags) {
  return Ipc(t).ShmGet(t, key, size, flags);
}

Result<uint64_t> SysShmat(Task& t, int id, uint64_t addr, int flags) {
  return Ipc(t).ShmAt(t, id, addr, flags);
}

Result<uint64_t> SysShmdt(Task& t, uint64_t addr) {
  SENTRY_TRY(t.mm().DetachShared(t.ctx(), addr));
  return 0;
}

Result<uint64_t> SysShmctl(Task& t, int id, int cmd, GuestAddr buf) {
  return Ipc(t).ShmCtl(t, id, cmd, buf);
}

Result<uint64_t> SysSemget(Task& t, int32_t key, int nsems, int flags) {
  return Ipc(t).SemGet(t, key, nsems, flags);
}

Result<uint64_t> SysSemtimedop(Task& t, int id, GuestAddr sops_addr, size_t nsops,
                               GuestAddr timeout) {
  kernel::IpcNamespace& ipc = Ipc(t);
  if (nsops < 1 || id < 0) return Errno(EINVAL);
  if (nsops > static_cast<size_t>(ipc.limits.semopm)) return Errno(E2BIG);
  std::vector<struct sembuf> sops(nsops);
  SENTRY_TRY(t.CopyInBytes(
      sops_addr, {reinterpret_cast<uint8_t*>(sops.data()), nsops * sizeof(struct sembuf)}));
  absl::Time deadline = absl::InfiniteFuture();
  if (!timeout.IsNull()) {
    absl::Duration d = SENTRY_TRY(CopyInDuration(t, timeout));
    if (d < absl::ZeroDuration()) return Errno(EINVAL);
    deadline = absl::Now() + d;
  }
  SENTRY_TRY(ipc.SemOp(t, id, std::move(sops), deadline));
  return 0;
}

Result<uint64_t> SysSemop(Task& t, int id, GuestAddr sops, size_t nsops) {
  return SysSemtimedop(t, id, sops, nsops, GuestAddr(0));
}

Result<uint64_t> SysSemctl(Task& t, int id, int num, int cmd, uint64_t arg) {
  return Ipc(t).SemCtl(t, id, num, cmd, arg);
}

Result<uint64_t> SysMsgget(Task& t, int32_t key, int flags) { return Ipc(t).MsgGet(t, key, flags); }

Result<uint64_t> SysMsgsnd(Task& t, int id, GuestAddr msgp, size_t size, int flags) {
  kernel::IpcNamespace& ipc = Ipc(t);
  long type = SENTRY_TRY(t.CopyIn<long>(msgp));
  if (size > static_cast<size_t>(ipc.limits.msgmax) || id < 0) return Errno(EINVAL);
  if (type < 1) return Errno(EINVAL);
  std::vector<uint8_t> text(size);
  SENTRY_TRY(t.CopyInBytes(msgp + sizeof(long), text));
  SENTRY_TRY(ipc.MsgSnd(t, id, type, std::move(text), flags));
  return 0;
}

Result<uint64_t> SysMsgrcv(Task& t, int id, GuestAddr msgp, size_t size, long type, int flags) {
  if (id < 0 || static_cast<long>(size) < 0) return Errno(EINVAL);
  auto [got_type, text] = SENTRY_TRY(Ipc(t).MsgRcv(t, id, size, type, flags));
  SENTRY_TRY(t.CopyOut(msgp, got_type));
  SENTRY_TRY(t.CopyOutBytes(msgp + sizeof(long), text));
  return text.size();
}

Result<uint64_t> SysMsgctl(Task& t, int id, int cmd, GuestAddr buf) {
  return Ipc(t).MsgCtl(t, id, cmd, buf);
}

}  // namespace sentry::syscalls
