// wait4 and waitid: reporting and reaping children's state changes, with the pids the
// caller's PID namespace gives them.
#include <signal.h>
#include <sys/wait.h>

#include "sentry/kernel/pidfd.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::ThreadGroup;

namespace {

struct WaitResult {
  int pid = 0;
  int status = 0;  // wait status word
  int code = 0;    // CLD_*
  uint32_t uid = 0;
  kernel::CpuTime cpu;  // the child's and its reaped children's: wait4/waitid's rusage
};

constexpr int kPPidfd = 3;  // P_PIDFD

// The global pid of the caller's number `local`, or -1 (which no process has) when there is
// no such process in its namespace.
int GlobalOrNone(Task& t, int local) {
  int global = t.GlobalPid(local);
  return global > 0 ? global : -1;
}

bool Matches(ThreadGroup& c, int idtype, int id, const ThreadGroup* only) {
  switch (idtype) {
    case P_ALL:
      return true;
    case P_PID:
      return c.tgid == id;
    case P_PGID:
      return c.pgid == id;
    case kPPidfd:
      return &c == only;
    default:
      return false;
  }
}

// Finds a child state change to report. Returns pid 0 with WNOHANG if none yet. For P_PIDFD,
// `only` is the process the pidfd names.
Result<WaitResult> DoWait(Task& t, int idtype, int id, int options,
                          const ThreadGroup* only = nullptr) {
  kernel::Kernel& k = t.kernel();
  ScopedWait w(t.tg().child_events, t.waiter());
  // As Linux's do_wait, a wait a signal ended looks at the children once more first: the
  // child whose exit sent the SIGCHLD is reported rather than EINTR.
  std::optional<Errno> interrupted;
  for (;;) {
    {
      absl::MutexLock l(&k.mu());
      if (idtype == P_PGID && id == 0) id = t.tg().pgid;
      bool any = false;
      // Tracees first: their ptrace-stops and exits, whether or not they are our children.
      auto match = [&](int pid, int pgid) {
        return idtype == P_ALL || (idtype == P_PID && pid == id) ||
               (idtype == P_PGID && pgid == id);
      };
      if (auto ev = kernel::PtraceWait(t, options, match, &any)) {
        return WaitResult{t.ToLocalPid(ev->pid), ev->status, ev->code, ev->uid, {}};
      }
      auto children = t.tg().children;  // copy: reaping edits the list
      for (auto& c : children) {
        if (!Matches(*c, idtype, id, only)) continue;
        // __WCLONE selects children that do not signal SIGCHLD on exit.
        bool clone_child = c->exit_signal != SIGCHLD;
        if (!(options & __WALL) && clone_child != static_cast<bool>(options & __WCLONE)) continue;
        // A zombie is nothing to wait for without WEXITED: it will never stop or continue
        // again, so a wait for those alone ends with ECHILD (Linux's wait_consider_task).
        if (c->zombie && !(options & WEXITED)) continue;
        any = true;
        if (c->zombie && (options & WEXITED)) {
          // The pid as the caller numbers it, taken before Reap frees it.
          WaitResult r{t.ToLocalPid(c->tgid), c->exit_status, 0, c->creds.ruid,
                       c->cpu_exited + c->cpu_children};
          int s = c->exit_status;
          r.code = WIFSIGNALED(s) ? (WCOREDUMP(s) ? abi::kCLD_DUMPED : abi::kCLD_KILLED)
                                  : abi::kCLD_EXITED;
          if (!(options & WNOWAIT)) {
            // As Linux's wait_task_zombie: only a child reaped by wait counts in
            // RUSAGE_CHILDREN (not one auto-reaped because SIGCHLD is ignored).
            t.tg().cpu_children += r.cpu;
            k.Reap(*c);
          }
          return r;
        }
        // A child we trace reports its group-stop as a ptrace-stop only (Linux's
        // wait_consider_task).
        kernel::Task* tracer = c->leader ? c->leader->ptrace_.tracer : nullptr;
        bool traced_by_us = tracer != nullptr && &tracer->tg() == &t.tg();
        if (c->stopped && c->stop_to_report && (options & WUNTRACED) && !traced_by_us) {
          if (!(options & WNOWAIT)) c->stop_to_report = false;
          return WaitResult{t.ToLocalPid(c->tgid), kernel::StopStatus(c->stop_signal),
                            abi::kCLD_STOPPED, c->creds.ruid,
                            k.GroupCpuUsage(*c) + c->cpu_children};
        }
        if (c->continue_to_report && (options & WCONTINUED)) {
          if (!(options & WNOWAIT)) c->continue_to_report = false;
          return WaitResult{t.ToLocalPid(c->tgid), 0xffff, abi::kCLD_CONTINUED, c->creds.ruid,
                            k.GroupCpuUsage(*c) + c->cpu_children};
        }
      }
      if (!any) return Errno(ECHILD);
      if (options & WNOHANG) return WaitResult{};
      if (interrupted) return *interrupted;
    }
    if (auto r = t.Wait(); !r.ok()) interrupted = r.error();
  }
}

}  // namespace

Result<uint64_t> SysWait4(Task& t, int pid, GuestAddr status, int options, GuestAddr rusage) {
  if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WALL | __WCLONE)) {
    return Errno(EINVAL);
  }
  // Ids are the caller's namespace's numbers; one with no process there matches none.
  int idtype = P_ALL, id = 0;
  if (pid > 0) {
    idtype = P_PID, id = GlobalOrNone(t, pid);
  } else if (pid == 0) {
    idtype = P_PGID, id = 0;
  } else if (pid < -1) {
    idtype = P_PGID, id = GlobalOrNone(t, -pid);
  }
  WaitResult r = SENTRY_TRY(DoWait(t, idtype, id, options | WEXITED));
  if (r.pid == 0) return 0;
  if (!status.IsNull()) SENTRY_TRY(t.CopyOut<int32_t>(status, r.status));
  if (!rusage.IsNull()) SENTRY_TRY(t.CopyOut(rusage, kernel::ToRusage(r.cpu)));
  return static_cast<uint64_t>(r.pid);
}

Result<uint64_t> SysWaitid(Task& t, int idtype, int id, GuestAddr infop, int options,
                           GuestAddr rusage) {
  if (options &
      ~(WNOHANG | WSTOPPED | WCONTINUED | WEXITED | WNOWAIT | __WNOTHREAD | __WALL | __WCLONE)) {
    return Errno(EINVAL);
  }
  if (!(options & (WEXITED | WSTOPPED | WCONTINUED))) return Errno(EINVAL);
  if (idtype != P_ALL && idtype != P_PID && idtype != P_PGID && idtype != kPPidfd) {
    return Errno(EINVAL);
  }
  if ((idtype == P_PID && id <= 0) || ((idtype == P_PGID || idtype == kPPidfd) && id < 0)) {
    return Errno(EINVAL);
  }
  if ((idtype == P_PID || idtype == P_PGID) && id > 0) id = GlobalOrNone(t, id);
  std::shared_ptr<ThreadGroup> only;
  bool nonblock = false;
  if (idtype == kPPidfd) {
    vfs::FileRef f = SENTRY_TRY(GetFile(t, id));
    kernel::PidFd* p = SENTRY_TRY(kernel::AsPidFd(f));
    nonblock = f->NonBlocking();  // PIDFD_NONBLOCK: as WNOHANG, but EAGAIN when nothing is due
    // A thread pidfd waits for its thread's process only if the thread is its leader; for
    // any other thread there is no child to wait for (ECHILD).
    absl::MutexLock l(&t.kernel().mu());
    if (!p->thread() || p->thread().get() == p->group()->leader) only = p->group();
  }
  WaitResult r = SENTRY_TRY(DoWait(t, idtype, id, options | (nonblock ? WNOHANG : 0), only.get()));
  if (nonblock && r.pid == 0 && !(options & WNOHANG)) return Errno(EAGAIN);
  if (!infop.IsNull()) {
    abi::SigInfo si{};
    if (r.pid) {
      si.signo = SIGCHLD;
      si.code = r.code;
      si.f.chld.pid = r.pid;
      si.f.chld.uid = r.uid;
      si.f.chld.status = r.code == abi::kCLD_EXITED      ? WEXITSTATUS(r.status)
                         : r.code == abi::kCLD_STOPPED   ? WSTOPSIG(r.status)
                         : r.code == abi::kCLD_TRAPPED   ? WSTOPSIG(r.status)
                         : r.code == abi::kCLD_CONTINUED ? SIGCONT
                                                         : WTERMSIG(r.status);
    }
    SENTRY_TRY(t.CopyOut(infop, si));
  }
  // As Linux: with WNOHANG and nothing to report, the rusage is left alone.
  if (!rusage.IsNull() && r.pid) SENTRY_TRY(t.CopyOut(rusage, kernel::ToRusage(r.cpu)));
  return 0;
}

}  // namespace sentry::syscalls
