// Callbacks at deadlines, run on one host thread: what wakes the waiters of a timerfd when it
// expires. (setitimer and POSIX timers can use it too.)
//
// Lock order: a caller may hold its own locks while calling Schedule/Cancel; TimerQueue::mu_
// is then a leaf. Callbacks run with no TimerQueue lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sentry {

class TimerQueue {
 public:
  using Id = uint64_t;

  // The process-wide queue; its thread starts on first use and is never joined.
  static TimerQueue& Global();

  // Runs `fn` once, at or soon after `when`. A callback may run late but never early by the
  // host clock; callers re-check their own clock and reschedule if need be.
  Id Schedule(absl::Time when, std::function<void()> fn);
  // Forgets a callback not yet started. One that is running now is not waited for: callbacks
  // hold weak references to what they act on.
  void Cancel(Id id);

 private:
  TimerQueue() = default;
  void Loop();

  absl::Mutex mu_;
  absl::CondVar cv_;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::multimap<absl::Time, std::pair<Id, std::function<void()>>> due_ ABSL_GUARDED_BY(mu_);
  std::map<Id, absl::Time> when_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry
