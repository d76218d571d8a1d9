// pidfds: pidfd_open, pidfd_send_signal, pidfd_getfd. (CLONE_PIDFD and waitid(P_PIDFD) are in
// sys_process.cc; the file itself is sentry/kernel/pidfd.h.)
#include <signal.h>

#include "sentry/kernel/access.h"
#include "sentry/kernel/pidfd.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::ThreadGroup;

namespace {

// pidfd_send_signal's flags (Linux 6.9): whom the signal is for.
constexpr unsigned kSignalThread = 1;
constexpr unsigned kSignalThreadGroup = 2;
constexpr unsigned kSignalProcessGroup = 4;

Result<std::shared_ptr<ThreadGroup>> PidfdTarget(Task& t, int pidfd) {
  vfs::FileRef f = SENTRY_TRY(GetFile(t, pidfd));
  return kernel::PidFdGroup(f);
}

// Delivers `info` as pidfd_send_signal's `flags` say. Preconditions: Kernel::mu_ held.
Result<void> SendTo(Task& t, ThreadGroup& tg, const abi::SigInfo& info, unsigned flags) {
  kernel::Kernel& k = t.kernel();
  if (flags & kSignalProcessGroup) {
    std::vector<ThreadGroup*> members;
    for (ThreadGroup* g : k.AllGroups()) {
      if (g->pgid == tg.tgid && !g->zombie) members.push_back(g);
    }
    if (members.empty()) return Errno(ESRCH);
    for (ThreadGroup* g : members) {
      if (!kernel::MayKill(t.tg(), *g, info.signo)) return Errno(EPERM);
    }
    if (info.signo != 0) {
      for (ThreadGroup* g : members) k.SendGroupSignal(*g, info);
    }
    return Ok();
  }
  if (!kernel::MayKill(t.tg(), tg, info.signo)) return Errno(EPERM);
  if (info.signo == 0 || tg.zombie) return Ok();  // a zombie takes signals and drops them
  if (flags & kSignalThread) {
    // The leader thread only; gone if it has exited before the rest of the process.
    auto& live = tg.tasks;
    if (std::find(live.begin(), live.end(), tg.leader) != live.end()) {
      k.SendTaskSignal(*tg.leader, info);
    }
    return Ok();
  }
  k.SendGroupSignal(tg, info);
  return Ok();
}

}  // namespace

Result<uint64_t> SysPidfdOpen(Task& t, int pid, unsigned flags) {
  // Partial: PIDFD_THREAD (Linux 6.9, O_EXCL) is refused as Linux 6.1 refuses it.
  if (flags & ~static_cast<unsigned>(O_NONBLOCK)) return Errno(EINVAL);
  if (pid <= 0) return Errno(EINVAL);
  kernel::Kernel& k = t.kernel();
  std::shared_ptr<ThreadGroup> tg;
  {
    absl::MutexLock l(&k.mu());
    auto it = k.groups().find(pid);
    if (it == k.groups().end()) {
      // A thread that is not its process's leader (ENOENT as Linux 6.9+; 6.1 said EINVAL).
      return Errno(k.TaskByTid(pid) != nullptr ? ENOENT : ESRCH);
    }
    tg = it->second;
  }
  vfs::FileRef f = kernel::NewPidFd(k, std::move(tg), flags & O_NONBLOCK);
  return t.fds().Add(std::move(f), /*cloexec=*/true, 0, NofileLimit(t));
}

Result<uint64_t> SysPidfdSendSignal(Task& t, int pidfd, int sig, GuestAddr uinfo, unsigned flags) {
  if (flags & ~(kSignalThread | kSignalThreadGroup | kSignalProcessGroup)) return Errno(EINVAL);
  if (__builtin_popcount(flags) > 1) return Errno(EINVAL);
  std::shared_ptr<ThreadGroup> tg = SENTRY_TRY(PidfdTarget(t, pidfd));
  abi::SigInfo info{};
  bool to_self = tg.get() == &t.tg() && t.tid() == tg->tgid && !(flags & kSignalProcessGroup);
  if (!uinfo.IsNull()) {
    info = SENTRY_TRY(t.CopyIn<abi::SigInfo>(uinfo));
    if (info.signo != sig) return Errno(EINVAL);
    // Only the kernel may claim SI_USER, SI_KERNEL or SI_TKILL, except towards oneself.
    if (!to_self && (info.code >= 0 || info.code == abi::kSI_TKILL)) return Errno(EPERM);
    info.pad0 = 0;
  } else {
    info.signo = sig;
    info.code = abi::kSI_USER;
    info.f.kill.pid = t.tg().tgid;
    info.f.kill.uid = t.tg().creds.ruid;
  }
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  if (k.GroupByTgid(tg->tgid) != tg.get()) return Errno(ESRCH);  // reaped
  if (sig < 0 || sig > abi::kNumSignals) return Errno(EINVAL);
  SENTRY_TRY(SendTo(t, *tg, info, flags));
  return 0;
}

Result<uint64_t> SysPidfdGetfd(Task& t, int pidfd, int fd, unsigned flags) {
  if (flags != 0) return Errno(EINVAL);
  std::shared_ptr<ThreadGroup> tg = SENTRY_TRY(PidfdTarget(t, pidfd));
  std::shared_ptr<vfs::FdTable> fds;
  {
    absl::MutexLock l(&t.kernel().mu());
    if (t.kernel().GroupByTgid(tg->tgid) != tg.get()) return Errno(ESRCH);
    if (!kernel::MayPtrace(t.tg(), *tg)) return Errno(EPERM);
    // An exited process has no files left (ESRCH as Linux 6.8+; EBADF before).
    if (tg->zombie || tg->tasks.empty()) return Errno(ESRCH);
    kernel::Task* holder = tg->tasks.front();
    for (kernel::Task* m : tg->tasks) {
      if (m == tg->leader) holder = m;
    }
    fds = holder->fds_ref();
  }
  if (fds == nullptr) return Errno(ESRCH);
  vfs::FileRef file = SENTRY_TRY(fds->Get(fd));
  return t.fds().Add(std::move(file), /*cloexec=*/true, 0, NofileLimit(t));
}

}  // namespace sentry::syscalls
