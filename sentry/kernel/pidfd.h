// pidfds: files that name a process, or with PIDFD_THREAD (Linux 6.9) one thread, as Linux's
// pidfd_open and CLONE_PIDFD make them.
//
// A pidfd holds the ThreadGroup (and the Task) itself, never a number: once the process is
// reaped its pid may be handed out again, and the pidfd must keep naming the old one (ESRCH
// from then on). A process pidfd polls readable once every thread of the process has exited (a
// zombie or gone); a thread pidfd once its thread has exited. Both add POLLHUP once the pid is
// released (reaped; a non-leader thread at once), as Linux 6.9 and later.
//
// Lock order: Readiness takes Kernel::mu_ alone.
#pragma once

#include <memory>
#include <string>

#include "sentry/kernel/kernel.h"
#include "vfs/anon_file.h"

namespace sentry::kernel {

class PidFd final : public vfs::AnonFile {
 public:
  // `thread` is null for a process pidfd.
  PidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, std::shared_ptr<Task> thread, int flags);

  const std::shared_ptr<ThreadGroup>& group() const { return tg_; }
  const std::shared_ptr<Task>& thread() const { return thread_; }
  // The pid it names is gone (the process reaped; a non-leader thread exited).
  // Preconditions: Kernel::mu_ held.
  bool Released();
  // What it names has exited (all threads of a process, or the thread).
  // Preconditions: Kernel::mu_ held.
  bool Exited();
  // The thread that stands for it: the thread, or the process's leader while it runs, else any
  // thread of the process; null once none is left. Preconditions: Kernel::mu_ held.
  Task* AnyLiveTask();

  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override { return &tg_->exit_events; }
  // The global number of what it names, -1 once released (/proc/PID/fdinfo's Pid line
  // numbers it as the proc instance's namespace does). Preconditions: Kernel::mu_ held.
  int GlobalPid();

 private:
  Kernel& k_;
  const std::shared_ptr<ThreadGroup> tg_;
  const std::shared_ptr<Task> thread_;
};

// A new pidfd (O_RDWR, O_NONBLOCK for PIDFD_NONBLOCK, O_EXCL for PIDFD_THREAD) for `tg`, or for
// its thread `thread` when that is not null.
vfs::FileRef NewPidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, std::shared_ptr<Task> thread,
                      bool nonblock);

// The pidfd the open file `f` is: EBADF when it is not one, as Linux's pidfd_pid.
Result<PidFd*> AsPidFd(const vfs::FileRef& f);

}  // namespace sentry::kernel
