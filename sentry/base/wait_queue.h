// Blocking primitives shared by the kernel and the subsystems below it.
//
// Kernel code blocks in straight-line style: register a Waiter on the WaitQueues it cares
// about, re-check the condition, then Blocker::Wait(). Registering before checking means a
// Notify() between the check and the wait is never lost.
//
// Lock order: WaitQueue::mu_ may be taken while holding subsystem locks (pipe, futex);
// Waiter::mu_ is a leaf. A WaitCallback runs under its queue's lock and may take the locks of
// the subsystem it belongs to (epoll's ready list) and notify further queues.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
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
// POLLRDNORM / POLLWRNORM: most files (pipes, ttys, regular files, inotify, epoll, message
// queues) report them with kEventIn / kEventOut; eventfd, timerfd and signalfd do not.
inline constexpr EventMask kEventRdNorm = 0x040;
inline constexpr EventMask kEventWrNorm = 0x100;
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

// Code run by WaitQueue::Notify instead of waking a thread: how epoll hears that a file it
// watches may have become ready. It runs on the notifying thread with the queue's lock held,
// so it must be quick, never block and never touch the queue it is registered on.
class WaitCallback {
 public:
  virtual void OnNotify(EventMask events) = 0;

 protected:
  ~WaitCallback() = default;
};

class WaitQueue {
  struct State;

 public:
  WaitQueue();
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  void Add(Waiter* w, EventMask mask = kAllEvents);
  void Remove(Waiter* w);
  // Wakes every waiter, and runs every callback, whose mask intersects `events`.
  void Notify(EventMask events = kAllEvents);
  bool Empty();

  // A callback's place on a queue, removed by Reset() or destruction; once that returns the
  // callback is not running and will not run again. It may outlive the queue (an epoll
  // registration outlives the file it watches): the entry list is shared with it.
  class Registration {
   public:
    Registration() = default;
    ~Registration() { Reset(); }
    Registration(Registration&& o) noexcept
        : state_(std::move(o.state_)), callback_(std::exchange(o.callback_, nullptr)) {}
    Registration& operator=(Registration&& o) noexcept;
    void Reset();

   private:
    friend class WaitQueue;
    std::shared_ptr<State> state_;
    WaitCallback* callback_ = nullptr;
  };
  [[nodiscard]] Registration AddCallback(WaitCallback* cb, EventMask mask = kAllEvents);

 private:
  struct Entry {
    Waiter* waiter;  // exactly one of waiter and callback is set
    WaitCallback* callback;
    EventMask mask;
  };
  struct State {
    absl::Mutex mu;
    std::vector<Entry> entries ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<State> state_;
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

// A Blocker for work that must never wait (copy-up, writing set-up files into the in-memory
// layer): every wait fails at once with EAGAIN.
class NoWaitBlocker final : public Blocker {
 public:
  Waiter& waiter() override { return waiter_; }
  Result<void> Wait(absl::Time) override { return Errno(EAGAIN); }
  Result<int> WaitHostFd(int, short, absl::Time) override { return Errno(EAGAIN); }

 private:
  Waiter waiter_;
};

}  // namespace sentry
