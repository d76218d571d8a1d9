// eventfd: a 64-bit counter. write(2) adds to it (blocking while the sum would pass
// 0xfffffffffffffffe); read(2) takes it all and zeroes it, or takes 1 in semaphore mode
// (blocking while it is 0).
//
// Lock order: EventFd::state_mu_ -> WaitQueue::mu_.
#pragma once

#include <memory>

#include "vfs/anon_file.h"

namespace sentry::vfs {

class EventFd final : public AnonFile {
 public:
  EventFd(uint64_t initial, bool semaphore, int flags)
      : AnonFile(flags, "[eventfd]"), count_(initial), semaphore_(semaphore) {}

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override;
  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override { return &queue_; }
  // The kernel's eventfd_signal (an AIO completion with IOCB_FLAG_RESFD): adds `n`, saturating
  // at ULLONG_MAX instead of blocking. Never call it from a callback on this file's queue.
  void Signal(uint64_t n);

 private:
  static constexpr uint64_t kMax = ~uint64_t{0} - 1;

  absl::Mutex state_mu_;
  uint64_t count_ ABSL_GUARDED_BY(state_mu_);
  const bool semaphore_;
  WaitQueue queue_;
};

// eventfd2's flags: EFD_SEMAPHORE, EFD_NONBLOCK (EFD_CLOEXEC is the fd's, not the file's).
std::shared_ptr<EventFd> NewEventFd(uint64_t initial, int flags);

}  // namespace sentry::vfs
