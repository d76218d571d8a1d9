// POSIX message queues: mq_open, mq_unlink, mq_timedsend, mq_timedreceive, mq_notify,
// mq_getsetattr. The queues live in sentry/kernel/mqueue.cc.
#include <mqueue.h>
#include <signal.h>

#include "syscalls/common.h"

namespace sentry::syscalls {

// The caller's IPC namespace.
static kernel::IpcNamespace& Ipc(Task& t) { return *t.ns().ipc->ipc; }
namespace {

constexpr unsigned kMqPrioMax = 32768;  // MQ_PRIO_MAX

struct MqAttr {
  int64_t flags, maxmsg, msgsize, curmsgs;
  int64_t reserved[4];
};

// The kernel's struct sigevent: value, signo, notify, then the union (64 bytes in all).
struct SigEvent {
  uint64_t value;
  int32_t signo;
  int32_t notify;
  uint8_t rest[48];
};
static_assert(sizeof(SigEvent) == 64);

Result<kernel::MqFile*> GetMq(const vfs::FileRef& f) {
  auto* m = dynamic_cast<kernel::MqFile*>(f.get());
  if (m == nullptr) return Errno(EBADF);
  return m;
}

// An absolute CLOCK_REALTIME timeout, or none.
Result<absl::Time> Deadline(Task& t, GuestAddr timeout) {
  if (timeout.IsNull()) return absl::InfiniteFuture();
  absl::Duration d = SENTRY_TRY(CopyInDuration(t, timeout));
  return absl::UnixEpoch() + d;
}

Result<std::string> CopyInName(Task& t, GuestAddr name) { return t.CopyInString(name, 4096); }

}  // namespace

Result<uint64_t> SysMqOpen(Task& t, GuestAddr name_addr, int flags, uint32_t mode,
                           GuestAddr attr_addr) {
  kernel::MqNamespace::OpenRequest r;
  r.name = SENTRY_TRY(CopyInName(t, name_addr));
  r.flags = flags;
  r.mode = mode & ~t.fs().umask();
  r.has_attr = (flags & O_CREAT) && !attr_addr.IsNull();
  if (r.has_attr) {
    auto attr = SENTRY_TRY(t.CopyIn<MqAttr>(attr_addr));
    r.maxmsg = attr.maxmsg;
    r.msgsize = attr.msgsize;
  }
  kernel::IpcCaller c = kernel::CallerOf(t);
  r.uid = c.uid;
  r.gid = c.gid;
  r.groups = c.groups;
  r.caps = c.caps;
  vfs::FileRef f = SENTRY_TRY(Ipc(t).mq.Open(r));
  // Message queue descriptors are always close-on-exec on Linux.
  return t.fds().Add(std::move(f), true, 0, NofileLimit(t));
}

Result<uint64_t> SysMqUnlink(Task& t, GuestAddr name_addr) {
  std::string name = SENTRY_TRY(CopyInName(t, name_addr));
  SENTRY_TRY(Ipc(t).mq.Unlink(name));
  return 0;
}

Result<uint64_t> SysMqTimedsend(Task& t, int fd, GuestAddr msg, size_t len, unsigned prio,
                                GuestAddr timeout) {
  if (prio >= kMqPrioMax) return Errno(EINVAL);
  absl::Time deadline = SENTRY_TRY(Deadline(t, timeout));
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  kernel::MqFile* mq = SENTRY_TRY(GetMq(f));
  if (!f->Writable()) return Errno(EBADF);
  if (len > static_cast<size_t>(mq->mq().msgsize())) return Errno(EMSGSIZE);
  std::vector<uint8_t> data(len);
  SENTRY_TRY(t.CopyInBytes(msg, data));
  auto n = SENTRY_TRY(mq->mq().Send(t, f->NonBlocking(), deadline, std::move(data), prio));
  if (n && n->signo > 0) {
    abi::SigInfo info{};
    info.signo = n->signo;
    info.code = -3;  // SI_MESGQ
    info.f.kill.value = n->value;
    absl::MutexLock l(&t.kernel().mu());
    info.f.kill.uid = t.tg().creds.ruid;
    if (kernel::ThreadGroup* g = t.kernel().GroupByTgid(n->pid)) {
      // The sender as the notified process's PID namespace numbers it (Linux's
      // __do_notify), 0 if it has no number there.
      info.f.kill.pid = kernel::PidIn(g->pidns.get(), t.tg().tgid);
      t.kernel().SendGroupSignal(*g, info);
    }
  }
  return 0;
}

Result<uint64_t> SysMqTimedreceive(Task& t, int fd, GuestAddr msg, size_t len, GuestAddr prio_addr,
                                   GuestAddr timeout) {
  absl::Time deadline = SENTRY_TRY(Deadline(t, timeout));
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  kernel::MqFile* mq = SENTRY_TRY(GetMq(f));
  if (!f->Readable()) return Errno(EBADF);
  if (len < static_cast<size_t>(mq->mq().msgsize())) return Errno(EMSGSIZE);
  auto [data, prio] = SENTRY_TRY(mq->mq().Receive(t, f->NonBlocking(), deadline));
  SENTRY_TRY(t.CopyOutBytes(msg, data));
  if (!prio_addr.IsNull()) SENTRY_TRY(t.CopyOut(prio_addr, prio));
  return data.size();
}

Result<uint64_t> SysMqNotify(Task& t, int fd, GuestAddr sevp) {
  std::optional<SigEvent> ev;
  if (!sevp.IsNull()) {
    ev = SENTRY_TRY(t.CopyIn<SigEvent>(sevp));
    if (ev->notify != SIGEV_NONE && ev->notify != SIGEV_SIGNAL && ev->notify != SIGEV_THREAD) {
      return Errno(EINVAL);
    }
    if (ev->notify == SIGEV_SIGNAL && (ev->signo < 1 || ev->signo > abi::kNumSignals)) {
      return Errno(EINVAL);
    }
  }
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  kernel::MqFile* mq = SENTRY_TRY(GetMq(f));
  int pid = kernel::CallerOf(t).pid;
  if (!ev) {
    SENTRY_TRY(mq->mq().SetNotify(pid, -1, 0));
    return 0;
  }
  // SIGEV_THREAD goes through a netlink socket, and the Sentry has no sockets yet.
  if (ev->notify == SIGEV_THREAD) return Errno(EBADF);
  int signo = ev->notify == SIGEV_SIGNAL ? ev->signo : 0;
  SENTRY_TRY(mq->mq().SetNotify(pid, signo, ev->value));
  return 0;
}

Result<uint64_t> SysMqGetsetattr(Task& t, int fd, GuestAddr new_addr, GuestAddr old_addr) {
  std::optional<MqAttr> set;
  if (!new_addr.IsNull()) {
    set = SENTRY_TRY(t.CopyIn<MqAttr>(new_addr));
    if (set->flags & ~static_cast<int64_t>(O_NONBLOCK)) return Errno(EINVAL);
  }
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  kernel::MqFile* mq = SENTRY_TRY(GetMq(f));
  MqAttr old{};
  old.flags = f->flags() & O_NONBLOCK;
  old.maxmsg = mq->mq().maxmsg();
  old.msgsize = mq->mq().msgsize();
  old.curmsgs = mq->mq().count();
  if (set) f->SetStatusFlags((f->flags() & ~O_NONBLOCK) | static_cast<int>(set->flags));
  if (!old_addr.IsNull()) SENTRY_TRY(t.CopyOut(old_addr, old));
  return 0;
}

}  // namespace sentry::syscalls
