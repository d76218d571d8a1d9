#include "sentry/kernel/pidfd.h"

#include "absl/strings/str_format.h"

namespace sentry::kernel {

PidFd::PidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, int flags)
    : AnonFile(flags, "[pidfd]"), k_(k), tg_(std::move(tg)) {}

bool PidFd::Reaped() { return k_.GroupByTgid(tg_->tgid) != tg_.get(); }

EventMask PidFd::Readiness(EventMask mask) {
  absl::MutexLock l(&k_.mu());
  EventMask ready = 0;
  if (tg_->zombie) ready |= kEventIn;
  if (Reaped()) ready |= kEventIn | kEventHup;
  return ready & (mask | kEventHup);
}

std::string PidFd::FdInfo() {
  absl::MutexLock l(&k_.mu());
  int pid = Reaped() ? -1 : tg_->tgid;
  return absl::StrFormat("Pid:\t%d\nNSpid:\t%d\n", pid, pid);
}

vfs::FileRef NewPidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, bool nonblock) {
  return std::make_shared<PidFd>(k, std::move(tg), O_RDWR | (nonblock ? O_NONBLOCK : 0));
}

Result<std::shared_ptr<ThreadGroup>> PidFdGroup(const vfs::FileRef& f) {
  auto* p = dynamic_cast<PidFd*>(f.get());
  if (p == nullptr) return Errno(EBADF);
  return p->group();
}

}  // namespace sentry::kernel
