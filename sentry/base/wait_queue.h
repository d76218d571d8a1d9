// Blocking primitives shared by the kernel and the subsystems below it.
//
// Kernel code blocks in straight-line style: register a Waiter on the WaitQueues it cares
// about, re-check the condition, then Blocker::Wait(). Registering before checking means a
// Notify() between the check and the wait is never lost.
//
// Lock order: WaitQueue::mu_ may be taken while holding subsystem locks (pipe, futex);
// Waiter::mu_ is a leaf.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sentry/base/errno.h"

namespace sentry {

// Event bits, the same values as poll(2)'s.
using EventMask = uint32_t;
inline constexpr EventMask kEventIn = 0x001;
inline constexpr EventMask kEventPri = 0x002;
inline constexpr EventMask kEventOut = 0x004;
inline constexpr EventMask kEventErr = 0x008;
inline constexpr EventMask kEventHup = 0x010;
inline constexpr EventMask kEventNval = 0x020;
inline constexpr EventMask kEventRdHup = 0x2000;
inline constexpr EventMask kAllEvents = ~0u;

// One per blocking thread. Notify() may be called from any thread, any number of times.
class Waiter {
 public:
  Waiter() = default;
  ~Waiter();
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  void Notify();
  // Sleeps until notified or `deadline`; consumes the notification. False on timeout.
  bool WaitUntil(absl::Time deadline);
  // Like WaitUntil, but also wakes when host fd `fd` reports one of `events`.
  // Returns the host revents (0 when woken by Notify or the deadline).
  int WaitHostFd(int fd, short events, absl::Time deadline);
  // Forgets a pending notification.
  void Clear();

 private:
  int EventFd();

  absl::Mutex mu_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  bool host_waiting_ ABSL_GUARDED_BY(mu_) = false;
  absl::CondVar cv_;
  int event_fd_ = -1;  // created on first host-fd wait; owned by the waiting thread
};

class WaitQueue {
 public:
  void Add(Waiter* w, EventMask mask = kAllEvents);
  void Remove(Waiter* w);
  // Wakes every waiter whose mask intersects `events`.
  void Notify(EventMask events = kAllEvents);
  bool Empty();

 private:
  struct Entry {
    Waiter* waiter;
    EventMask mask;
  };
  absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// Registers a waiter on a queue for the lifetime of the object.
class ScopedWait {
 public:
  ScopedWait(WaitQueue& q, Waiter& w, EventMask mask = kAllEvents) : q_(&q), w_(&w) {
    q_->Add(w_, mask);
  }
  ~ScopedWait() { q_->Remove(w_); }
  ScopedWait(const ScopedWait&) = delete;
  ScopedWait& operator=(const ScopedWait&) = delete;

 private:
  WaitQueue* q_;
  Waiter* w_;
};

// What a subsystem needs from the thread it blocks: its Waiter and an interruptible sleep.
// The kernel's Task implements it; unit tests use a plain implementation.
class Blocker {
 public:
  virtual ~Blocker() = default;
  virtual Waiter& waiter() = 0;
  // Sleeps until the waiter is notified (Ok), `deadline` passes (ETIMEDOUT) or the thread
  // must return to user mode to handle a signal or die (ERESTARTSYS).
  virtual Result<void> Wait(absl::Time deadline = absl::InfiniteFuture()) = 0;
  // Same, waiting for host fd readiness as well. Returns the host revents.
  virtual Result<int> WaitHostFd(int fd, short events,
                                 absl::Time deadline = absl::InfiniteFuture()) = 0;
};

}  // namespace sentry
