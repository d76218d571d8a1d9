#include "sentry/kernel/signalfd.h"

#include <signal.h>
#include <sys/signalfd.h>

#include <cstring>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

static_assert(sizeof(struct signalfd_siginfo) == 128);

// The signalfd_siginfo fields that the siginfo's layout (by signal and si_code) carries.
struct signalfd_siginfo ToSignalfdInfo(const abi::SigInfo& in) {
  struct signalfd_siginfo out;
  memset(&out, 0, sizeof(out));
  out.ssi_signo = in.signo;
  out.ssi_errno = in.errno_;
  out.ssi_code = in.code;
  bool from_kernel = in.code > 0;
  if (from_kernel && in.signo == SIGCHLD) {
    out.ssi_pid = in.f.chld.pid;
    out.ssi_uid = in.f.chld.uid;
    out.ssi_status = in.f.chld.status;
    out.ssi_utime = in.f.chld.utime;
    out.ssi_stime = in.f.chld.stime;
  } else if (from_kernel && in.signo == SIGSYS) {
    out.ssi_call_addr = in.f.sys.call_addr;
    out.ssi_syscall = in.f.sys.syscall;
    out.ssi_arch = in.f.sys.arch;
  } else if (from_kernel && (in.signo == SIGSEGV || in.signo == SIGBUS || in.signo == SIGILL ||
                             in.signo == SIGFPE || in.signo == SIGTRAP)) {
    out.ssi_addr = in.f.fault.addr;
  } else if (in.code == abi::kSI_TIMER) {
    out.ssi_tid = static_cast<uint32_t>(in.f.timer.tid);
    out.ssi_overrun = static_cast<uint32_t>(in.f.timer.overrun);
    out.ssi_int = static_cast<int32_t>(in.f.timer.value);
    out.ssi_ptr = in.f.timer.value;
  } else {
    // kill, tkill, sigqueue and the kernel's own SI_USER-style signals.
    out.ssi_pid = in.f.kill.pid;
    out.ssi_uid = in.f.kill.uid;
    out.ssi_int = static_cast<int32_t>(in.f.kill.value);
    out.ssi_ptr = in.f.kill.value;
  }
  return out;
}

}  // namespace

SignalFd::SignalFd(Kernel& k, abi::SigSet mask, int flags)
    : AnonFile(flags, "[signalfd]"), k_(k), mask_(mask & ~abi::kUnblockable) {}

void SignalFd::SetMask(abi::SigSet mask) {
  {
    absl::MutexLock l(&mask_mu_);
    mask_ = mask & ~abi::kUnblockable;
  }
  if (Task* t = Task::Current()) t->tg().signal_queued.Notify(kEventIn);
}

Result<size_t> SignalFd::Read(Blocker& b, std::span<uint8_t> dst) {
  constexpr size_t kSize = sizeof(struct signalfd_siginfo);
  size_t room = dst.size() / kSize;
  if (room == 0) return Errno(EINVAL);
  auto* t = dynamic_cast<Task*>(&b);
  if (t == nullptr) return Errno(EINVAL);
  ScopedWait wait(t->tg().signal_queued, b.waiter(), kEventIn);
  bool nonblock = NonBlocking();
  for (;;) {
    size_t n = 0;
    abi::SigSet blocked = ~mask();
    {
      absl::MutexLock l(&k_.mu());
      while (n < room) {
        auto info = k_.DequeueSignal(*t, blocked);
        if (!info) break;
        struct signalfd_siginfo si = ToSignalfdInfo(*info);
        memcpy(dst.data() + n * kSize, &si, kSize);
        n++;
      }
    }
    if (n > 0) return n * kSize;
    if (nonblock) return Errno(EAGAIN);
    SENTRY_TRY(b.Wait());
  }
}

EventMask SignalFd::Readiness(EventMask mask) {
  Task* t = Task::Current();
  if (t == nullptr || !(mask & kEventIn)) return 0;
  abi::SigSet want = this->mask();
  absl::MutexLock l(&k_.mu());
  return ((t->pending_.set | t->tg().pending.set) & want) ? kEventIn : 0;
}

WaitQueue* SignalFd::Queue() {
  Task* t = Task::Current();
  return t ? &t->tg().signal_queued : nullptr;
}

}  // namespace sentry::kernel
