#include "sentry/kernel/pidfd.h"

#include <algorithm>


namespace sentry::kernel {
namespace {

bool Live(ThreadGroup& tg, Task* t) {
  return std::find(tg.tasks.begin(), tg.tasks.end(), t) != tg.tasks.end();
}

}  // namespace

PidFd::PidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, std::shared_ptr<Task> thread, int flags)
    : AnonFile(flags, "[pidfd]"), k_(k), tg_(std::move(tg)), thread_(std::move(thread)) {}

bool PidFd::Released() {
  if (thread_) return k_.TaskByTid(thread_->tid()) != thread_.get();
  return k_.GroupByTgid(tg_->tgid) != tg_.get();
}

bool PidFd::Exited() { return thread_ ? !Live(*tg_, thread_.get()) : tg_->zombie; }

Task* PidFd::AnyLiveTask() {
  if (thread_) return Live(*tg_, thread_.get()) ? thread_.get() : nullptr;
  if (tg_->tasks.empty()) return nullptr;
  return Live(*tg_, tg_->leader) ? tg_->leader : tg_->tasks.front();
}

EventMask PidFd::Readiness(EventMask mask) {
  absl::MutexLock l(&k_.mu());
  EventMask ready = 0;
  if (Exited()) ready |= kEventIn;
  if (Released()) ready |= kEventIn | kEventHup;
  return ready & (mask | kEventHup);
}

int PidFd::GlobalPid() {
  if (Released()) return -1;
  return thread_ ? thread_->tid() : tg_->tgid;
}

vfs::FileRef NewPidFd(Kernel& k, std::shared_ptr<ThreadGroup> tg, std::shared_ptr<Task> thread,
                      bool nonblock) {
  int flags = O_RDWR | (nonblock ? O_NONBLOCK : 0) | (thread ? O_EXCL : 0);
  return std::make_shared<PidFd>(k, std::move(tg), std::move(thread), flags);
}

Result<PidFd*> AsPidFd(const vfs::FileRef& f) {
  auto* p = dynamic_cast<PidFd*>(f.get());
  if (p == nullptr) return Errno(EBADF);
  return p;
}

}  // namespace sentry::kernel
