#include "vfs/timerfd.h"

#include <time.h>

#include <cstring>

#include "sentry/base/timer_queue.h"

namespace sentry::vfs {
namespace {

int64_t NowNs(int clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

constexpr absl::Duration kBusyFloor = absl::Milliseconds(1);

}  // namespace

bool TimerFdClockOk(int clock) {
  switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_BOOTTIME:
    case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM:
      return true;
    default:
      return false;
  }
}

// Shared with the TimerQueue callback, which holds it weakly.
struct TimerFd::State : std::enable_shared_from_this<State> {
  explicit State(int c) : clock(c) {}

  // Counts the expirations up to now into `ticks`.
  void UpdateLocked(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (next_ns == 0 || now < next_ns) return;
    if (interval_ns == 0) {
      ticks++;
      next_ns = 0;
      return;
    }
    uint64_t n = 1 + static_cast<uint64_t>((now - next_ns) / interval_ns);
    ticks += n;
    next_ns += static_cast<int64_t>(n) * interval_ns;
  }

  // Asks the TimerQueue for a wake-up at the next expiration.
  void ScheduleLocked(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (next_ns == 0) return;
    absl::Duration delay = absl::Nanoseconds(next_ns - now);
    // While expirations wait to be read, further ones only matter to edge-triggered epoll:
    // do not let a tiny interval keep the timer thread busy.
    if (ticks > 0) delay = std::max(delay, kBusyFloor);
    absl::Time when = absl::Now() + delay;
    std::weak_ptr<State> weak = weak_from_this();
    uint64_t gen = generation;
    scheduled = TimerQueue::Global().Schedule(when, [weak, gen] {
      if (auto s = weak.lock()) s->Fire(gen);
    });
  }

  void Fire(uint64_t gen) {
    absl::MutexLock l(&mu);
    if (gen != generation) return;  // re-armed since
    int64_t now = NowNs(clock);
    uint64_t before = ticks;
    UpdateLocked(now);
    if (ticks != before) queue.Notify(kEventIn);
    ScheduleLocked(now);
  }

  const int clock;
  absl::Mutex mu;
  int64_t next_ns ABSL_GUARDED_BY(mu) = 0;  // absolute on `clock`; 0: disarmed
  int64_t interval_ns ABSL_GUARDED_BY(mu) = 0;
  uint64_t ticks ABSL_GUARDED_BY(mu) = 0;  // expirations not yet read
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;
  TimerQueue::Id scheduled ABSL_GUARDED_BY(mu) = 0;
  WaitQueue queue;
};

TimerFd::TimerFd(int clock, int flags)
    : AnonFile(flags, "[timerfd]"),
      // The alarm clocks would also wake a suspended machine; here they are the plain ones.
      state_(std::make_shared<State>(clock == CLOCK_REALTIME_ALARM   ? CLOCK_REALTIME
                                     : clock == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME
                                                                     : clock)) {}

TimerFd::~TimerFd() {
  absl::MutexLock l(&state_->mu);
  if (state_->scheduled) TimerQueue::Global().Cancel(state_->scheduled);
}

WaitQueue* TimerFd::Queue() { return &state_->queue; }

Result<size_t> TimerFd::Read(Blocker& b, std::span<uint8_t> dst) {
  if (dst.size() < sizeof(uint64_t)) return Errno(EINVAL);
  State& s = *state_;
  ScopedWait wait(s.queue, b.waiter(), kEventIn);
  bool nonblock = NonBlocking();
  for (;;) {
    absl::Time deadline = absl::InfiniteFuture();
    {
      absl::MutexLock l(&s.mu);
      int64_t now = NowNs(s.clock);
      s.UpdateLocked(now);
      if (s.ticks > 0) {
        uint64_t v = std::exchange(s.ticks, 0);
        memcpy(dst.data(), &v, sizeof(v));
        return sizeof(v);
      }
      if (s.next_ns != 0) deadline = absl::Now() + absl::Nanoseconds(s.next_ns - now);
    }
    if (nonblock) return Errno(EAGAIN);
    auto r = b.Wait(deadline);
    if (!r.ok() && r.error() != ETIMEDOUT) return r.error();
  }
}

EventMask TimerFd::Readiness(EventMask mask) {
  absl::MutexLock l(&state_->mu);
  state_->UpdateLocked(NowNs(state_->clock));
  return state_->ticks > 0 ? mask & kEventIn : 0;
}

TimerSpec TimerFd::Set(const TimerSpec& spec, bool abs) {
  TimerSpec old = Get();
  State& s = *state_;
  absl::MutexLock l(&s.mu);
  if (s.scheduled) TimerQueue::Global().Cancel(s.scheduled);
  s.scheduled = 0;
  s.generation++;
  s.ticks = 0;
  s.interval_ns = spec.interval_ns;
  int64_t now = NowNs(s.clock);
  if (spec.value_ns == 0) {
    s.next_ns = 0;
  } else {
    // An absolute time in the past (or 0 after the epoch) fires at once.
    s.next_ns = std::max<int64_t>(abs ? spec.value_ns : now + spec.value_ns, 1);
  }
  s.UpdateLocked(now);
  if (s.ticks > 0) s.queue.Notify(kEventIn);
  s.ScheduleLocked(now);
  return old;
}

TimerSpec TimerFd::Get() {
  State& s = *state_;
  absl::MutexLock l(&s.mu);
  int64_t now = NowNs(s.clock);
  s.UpdateLocked(now);
  TimerSpec cur;
  cur.interval_ns = s.interval_ns;
  if (s.next_ns != 0) cur.value_ns = std::max<int64_t>(s.next_ns - now, 1);
  return cur;
}

}  // namespace sentry::vfs
