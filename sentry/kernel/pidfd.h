// pidfds: files that name a process, as Linux's pidfd_open and CLONE_PIDFD make them.
//
// A pidfd holds the ThreadGroup itself, never its number: once the process is reaped its pid
// may be handed out again, and the pidfd must keep naming the old process (ESRCH from then
// on). It polls readable once every thread of the process has exited (a zombie or gone) and,
// as Linux 6.9 and later, POLLHUP as well once the process has been reaped.
//
// Lock order: Readiness and FdInfo take Kernel::mu_ alone.
#pragma once

#include <memory>
#include <string>

#include "sentry/kernel/kernel.h"
#include "vfs/anon_file.h"

namespace sentry::kernel {

class PidFd final : public vfs::AnonFile {
 public:
  PidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, int flags);

  const std::shared_ptr<ThreadGroup>& group() const { return tg_; }
  // Gone from the process table (reaped, or auto-reaped). Preconditions: Kernel::mu_ held.
  bool Reaped();

  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override { return &tg_->exit_events; }
  // What /proc/PID/fdinfo shows after the common lines: the pid, -1 once reaped.
  std::string FdInfo();

 private:
  Kernel& k_;
  const std::shared_ptr<ThreadGroup> tg_;
};

// A new pidfd (O_RDWR, plus O_NONBLOCK for PIDFD_NONBLOCK) for `tg`.
vfs::FileRef NewPidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, bool nonblock);

// The process the open file `f` names: EBADF when it is not a pidfd, as Linux's pidfd_pid.
Result<std::shared_ptr<ThreadGroup>> PidFdGroup(const vfs::FileRef& f);

}  // namespace sentry::kernel
