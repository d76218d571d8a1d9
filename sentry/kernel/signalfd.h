// signalfd: reads dequeue the reading thread's pending signals that are in the file's mask
// (its own, then its process's), as struct signalfd_siginfo; it polls readable while such a
// signal is pending for the polling thread. As on Linux the file follows whoever uses it, not
// whoever created it.
//
// Lock order: SignalFd::mask_mu_ is a leaf; Kernel::mu_ is taken alone.
#pragma once

#include <memory>

#include "sentry/abi/linux.h"
#include "vfs/anon_file.h"

namespace sentry::kernel {

class Kernel;

class SignalFd final : public vfs::AnonFile {
 public:
  SignalFd(Kernel& k, abi::SigSet mask, int flags);

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  EventMask Readiness(EventMask mask) override;
  // The calling thread's process's signal queue (null outside task threads).
  WaitQueue* Queue() override;

  // signalfd(fd, mask, ...) on an existing signalfd. SIGKILL and SIGSTOP are dropped.
  void SetMask(abi::SigSet mask);

 private:
  abi::SigSet mask() {
    absl::MutexLock l(&mask_mu_);
    return mask_;
  }

  Kernel& k_;
  absl::Mutex mask_mu_;
  abi::SigSet mask_ ABSL_GUARDED_BY(mask_mu_);
};

}  // namespace sentry::kernel
