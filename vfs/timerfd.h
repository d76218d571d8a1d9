// timerfd: a timer on CLOCK_REALTIME, CLOCK_MONOTONIC or CLOCK_BOOTTIME whose expirations are
// counted and read as a u64. Expirations are computed from the clock whenever the state is
// looked at; the process-wide TimerQueue only wakes the waiters when one is due.
//
// Lock order: TimerFd::State::mu -> WaitQueue::mu_, TimerQueue::mu_.
#pragma once

#include <memory>

#include "vfs/anon_file.h"

namespace sentry::vfs {

// A timer setting, in nanoseconds. value 0 means disarmed.
struct TimerSpec {
  int64_t interval_ns = 0;
  int64_t value_ns = 0;
};

class TimerFd final : public AnonFile {
 public:
  TimerFd(int clock, int flags);
  ~TimerFd() override;

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override;

  // timerfd_settime: `abs` when spec.value_ns is a time on the clock, not a delay. Returns the
  // old setting, relative. Expirations not yet read are dropped.
  TimerSpec Set(const TimerSpec& spec, bool abs);
  // timerfd_gettime: the time left to the next expiration and the interval.
  TimerSpec Get();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Clocks timerfd_create accepts.
bool TimerFdClockOk(int clock);

}  // namespace sentry::vfs
