#include "vfs/eventfd.h"

#include <sys/eventfd.h>

#include <algorithm>
#include <cstring>

namespace sentry::vfs {

Result<size_t> EventFd::Read(Blocker& b, std::span<uint8_t> dst) {
  if (dst.size() < sizeof(uint64_t)) return Errno(EINVAL);
  ScopedWait wait(queue_, b.waiter(), kEventIn);
  bool nonblock = NonBlocking();
  for (;;) {
    {
      absl::MutexLock l(&state_mu_);
      if (count_ > 0) {
        uint64_t v = semaphore_ ? 1 : count_;
        count_ -= v;
        memcpy(dst.data(), &v, sizeof(v));
        queue_.Notify(kEventOut);
        return sizeof(v);
      }
    }
    if (nonblock) return Errno(EAGAIN);
    SENTRY_TRY(b.Wait());
  }
}

Result<size_t> EventFd::Write(Blocker& b, std::span<const uint8_t> src) {
  if (src.size() < sizeof(uint64_t)) return Errno(EINVAL);
  uint64_t v;
  memcpy(&v, src.data(), sizeof(v));
  if (v > kMax) return Errno(EINVAL);
  ScopedWait wait(queue_, b.waiter(), kEventOut);
  bool nonblock = NonBlocking();
  for (;;) {
    {
      absl::MutexLock l(&state_mu_);
      if (kMax - count_ >= v) {
        count_ += v;
        queue_.Notify(kEventIn);
        return sizeof(v);
      }
    }
    if (nonblock) return Errno(EAGAIN);
    SENTRY_TRY(b.Wait());
  }
}

void EventFd::Signal(uint64_t n) {
  absl::MutexLock l(&state_mu_);
  count_ += std::min(n, ~uint64_t{0} - count_);
  queue_.Notify(kEventIn);
}

EventMask EventFd::Readiness(EventMask mask) {
  absl::MutexLock l(&state_mu_);
  EventMask m = 0;
  if (count_ > 0) m |= kEventIn;
  if (count_ < kMax) m |= kEventOut;
  return m & mask;
}

std::shared_ptr<EventFd> NewEventFd(uint64_t initial, int flags) {
  return std::make_shared<EventFd>(initial, flags & EFD_SEMAPHORE,
                                   O_RDWR | (flags & EFD_NONBLOCK ? O_NONBLOCK : 0));
}

}  // namespace sentry::vfs
