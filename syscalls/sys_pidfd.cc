// pidfds: pidfd_open, pidfd_send_signal, pidfd_getfd. (CLONE_PIDFD is in
// sys_process.cc, waitid(P_PIDFD) in sys_wait.cc; the file itself is sentry/kernel/pidfd.h.)
#include <signal.h>

#include "sentry/kernel/access.h"
#include "sentry/kernel/pidfd.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::PidFd;
using kernel::ThreadGroup;

namespace {

constexpr unsigned kPidfdThread = O_EXCL;  // PIDFD_THREAD (Linux 6.9)

// pidfd_send_signal's flags (Linux 6.9): whom the signal is for.
constexpr unsigned kSignalThread = 1;
constexpr unsigned kSignalThreadGroup = 2;
constexpr unsigned kSignalProcessGroup = 4;

struct Target {
  vfs::FileRef file;  // keeps `pidfd` alive
  PidFd* pidfd;
};

// The process a /proc/PID directory names, which Linux takes wherever a pidfd goes; null for
// any other file.
vfs::FileRef ProcDirAsPidfd(Task& t, const vfs::FileRef& f) {
  if (!f->mount() || f->mount()->fstype() != "proc" || !f->inode() || !f->inode()->IsDir()) {
    return nullptr;
  }
  std::string path = FilePath(t, f);
  constexpr std::string_view kPrefix = "/proc/";
  if (!path.starts_with(kPrefix) || path.size() == kPrefix.size()) return nullptr;
  std::string num = path.substr(kPrefix.size());
  if (num.find_first_not_of("0123456789") != std::string::npos) return nullptr;
  int pid = atoi(num.c_str());
  kernel::Kernel& k = t.kernel();
  std::shared_ptr<ThreadGroup> tg;
  {
    absl::MutexLock l(&k.mu());
    auto task = k.tasks().find(pid);
    if (task == k.tasks().end() || task->second->tg_ref()->tgid != pid) return nullptr;
    tg = task->second->tg_ref();
  }
  return kernel::NewPidFd(k, std::move(tg), nullptr, false);
}

Result<Target> GetPidfd(Task& t, int fd) {
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  if (vfs::FileRef proc = ProcDirAsPidfd(t, f)) f = std::move(proc);
  PidFd* p = SENTRY_TRY(kernel::AsPidFd(f));
  return Target{std::move(f), p};
}

// The members of process group `pgid` that a signal would reach. Preconditions: Kernel::mu_.
std::vector<ThreadGroup*> ProcessGroup(kernel::Kernel& k, int pgid) {
  std::vector<ThreadGroup*> members;
  for (ThreadGroup* g : k.AllGroups()) {
    if (g->pgid == pgid && !g->zombie) members.push_back(g);
  }
  return members;
}

// Delivers `info` to what `p` names, as pidfd_send_signal's `flags` (or the pidfd's kind) say.
// Preconditions: Kernel::mu_ held, `p` not released.
Result<void> SendTo(Task& t, PidFd& p, const abi::SigInfo& info, unsigned flags) {
  kernel::Kernel& k = t.kernel();
  ThreadGroup& tg = *p.group();
  if (flags & kSignalProcessGroup) {
    int pgid = p.thread() ? p.thread()->tid() : tg.tgid;
    std::vector<ThreadGroup*> members = ProcessGroup(k, pgid);
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
  bool to_thread = (flags & kSignalThread) || (p.thread() && !(flags & kSignalThreadGroup));
  if (!to_thread) {
    k.SendGroupSignal(tg, info);
    return Ok();
  }
  // One thread: the pidfd's, or the leader's; nothing if that has exited already.
  kernel::Task* target = p.thread() ? p.thread().get() : tg.leader;
  if (std::find(tg.tasks.begin(), tg.tasks.end(), target) != tg.tasks.end()) {
    k.SendTaskSignal(*target, info);
  }
  return Ok();
}

}  // namespace

Result<uint64_t> SysPidfdOpen(Task& t, int pid, unsigned flags) {
  if (flags & ~(static_cast<unsigned>(O_NONBLOCK) | kPidfdThread)) return Errno(EINVAL);
  if (pid <= 0) return Errno(EINVAL);
  kernel::Kernel& k = t.kernel();
  std::shared_ptr<ThreadGroup> tg;
  std::shared_ptr<kernel::Task> thread;
  {
    absl::MutexLock l(&k.mu());
    pid = t.ToGlobalPid(pid);  // a process outside the caller's PID namespace: ESRCH
    auto task = k.tasks().find(pid);
    if (task == k.tasks().end()) return Errno(ESRCH);
    tg = task->second->tg_ref();
    // Without PIDFD_THREAD, only a process's own pid will do (ENOENT for another thread's, as
    // Linux 6.9+; 6.1 said EINVAL).
    if (flags & kPidfdThread) {
      thread = task->second;
    } else if (tg->tgid != pid) {
      return Errno(ENOENT);
    }
  }
  vfs::FileRef f = kernel::NewPidFd(k, std::move(tg), std::move(thread), flags & O_NONBLOCK);
  return t.fds().Add(std::move(f), /*cloexec=*/true, 0, NofileLimit(t));
}

Result<uint64_t> SysPidfdSendSignal(Task& t, int pidfd, int sig, GuestAddr uinfo, unsigned flags) {
  if (flags & ~(kSignalThread | kSignalThreadGroup | kSignalProcessGroup)) return Errno(EINVAL);
  if (__builtin_popcount(flags) > 1) return Errno(EINVAL);
  Target target = SENTRY_TRY(GetPidfd(t, pidfd));
  PidFd& p = *target.pidfd;
  abi::SigInfo info{};
  if (!uinfo.IsNull()) {
    info = SENTRY_TRY(t.CopyIn<abi::SigInfo>(uinfo));
    if (info.signo != sig) return Errno(EINVAL);
    // Only the kernel may claim SI_USER, SI_KERNEL or SI_TKILL, except towards the calling
    // thread itself (a process pidfd names its leader).
    bool self = p.thread() ? p.thread().get() == &t
                           : p.group().get() == &t.tg() && t.tid() == p.group()->tgid;
    if ((!self || (flags & kSignalProcessGroup)) &&
        (info.code >= 0 || info.code == abi::kSI_TKILL)) {
      return Errno(EPERM);
    }
    info.pad0 = 0;
  } else {
    info.signo = sig;
    info.code = abi::kSI_USER;
    info.f.kill.pid = t.tg().tgid;
    info.f.kill.uid = t.tg().creds.ruid;
  }
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  if (p.Released()) return Errno(ESRCH);
  if (sig < 0 || sig > abi::kNumSignals) return Errno(EINVAL);
  SENTRY_TRY(SendTo(t, p, info, flags));
  return 0;
}

Result<uint64_t> SysPidfdGetfd(Task& t, int pidfd, int fd, unsigned flags) {
  if (flags != 0) return Errno(EINVAL);
  Target target = SENTRY_TRY(GetPidfd(t, pidfd));
  PidFd& p = *target.pidfd;
  std::shared_ptr<vfs::FdTable> fds;
  {
    absl::MutexLock l(&t.kernel().mu());
    if (p.Released()) return Errno(ESRCH);
    if (!kernel::MayPtrace(t.tg(), *p.group())) return Errno(EPERM);
    // An exited thread or process has no files left (ESRCH as Linux 6.8+; EBADF before).
    kernel::Task* holder = p.Exited() ? nullptr : p.AnyLiveTask();
    if (holder == nullptr) return Errno(ESRCH);
    fds = holder->fds_ref();
  }
  if (fds == nullptr) return Errno(ESRCH);
  vfs::FileRef file = SENTRY_TRY(fds->Get(fd));
  return t.fds().Add(std::move(file), /*cloexec=*/true, 0, NofileLimit(t));
}

}  // namespace sentry::syscalls
