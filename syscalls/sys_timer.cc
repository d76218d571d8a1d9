// Interval timers: alarm, setitimer/getitimer, and the POSIX timers (timer_*). The timers
// themselves are sentry/kernel/timers.h.
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

using kernel::KTimer;
using kernel::TimerClock;
using kernel::TimerSetting;

struct ItimerVal {
  abi::Timeval interval;
  abi::Timeval value;
};

struct ItimerSpec {
  abi::Timespec interval;
  abi::Timespec value;
};

// struct sigevent as the kernel reads it.
struct SigEvent {
  uint64_t value;
  int32_t signo;
  int32_t notify;
  int32_t tid;  // SIGEV_THREAD_ID
  int32_t pad[11];
};
static_assert(sizeof(SigEvent) == 64);

constexpr int64_t kNsPerSec = 1000000000;

// Times past what 64-bit nanoseconds hold saturate, as Linux's timespec64_to_ktime.
int64_t SaturatedNs(int64_t sec, int64_t ns) {
  if (sec >= INT64_MAX / kNsPerSec) return INT64_MAX;
  return sec * kNsPerSec + ns;
}

Result<int64_t> TimevalNs(const abi::Timeval& tv) {
  if (tv.sec < 0 || tv.usec < 0 || tv.usec >= 1000000) return Errno(EINVAL);
  return SaturatedNs(tv.sec, tv.usec * 1000);
}

Result<int64_t> TimespecNs(const abi::Timespec& ts) {
  if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= kNsPerSec) return Errno(EINVAL);
  return SaturatedNs(ts.sec, ts.nsec);
}

abi::Timeval ToTimeval(int64_t ns) { return {ns / kNsPerSec, (ns % kNsPerSec) / 1000}; }
abi::Timespec ToTimespec(int64_t ns) { return {ns / kNsPerSec, ns % kNsPerSec}; }

// The itimer `which` of the caller's process, made on first use.
// Preconditions: Kernel::mu_ held.
KTimer& Itimer(Task& t, int which) {
  kernel::ThreadGroup& tg = t.tg();
  std::shared_ptr<KTimer>& timer = tg.timers.itimers[which];
  if (!timer) {
    TimerClock c{TimerClock::kWall, CLOCK_MONOTONIC};
    auto kind = KTimer::Kind::kItimerReal;
    if (which != ITIMER_REAL) {
      c = TimerClock{TimerClock::kProcessCpu, 0, tg.tgid, which == ITIMER_VIRTUAL};
      kind = which == ITIMER_VIRTUAL ? KTimer::Kind::kItimerVirtual : KTimer::Kind::kItimerProf;
    }
    timer = std::make_shared<KTimer>(t.kernel(), tg, kind, c);
  }
  return *timer;
}

// Preconditions: Kernel::mu_ held.
Result<KTimer*> PosixTimer(Task& t, int id) {
  auto& timers = t.tg().timers.posix;
  auto it = timers.find(id);
  if (it == timers.end()) return Errno(EINVAL);
  return it->second.get();
}

// The clocks timer_create takes (kWall ones resolved here; CPU clocks later, as Linux does
// in the clock's own timer_create): EINVAL for no such clock, EOPNOTSUPP for clocks that
// have no timers.
Result<TimerClock> TimerCreateClock(int clock) {
  switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_BOOTTIME:
    case CLOCK_TAI:
      return TimerClock{TimerClock::kWall, clock};
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
      return TimerClock{TimerClock::kProcessCpu};  // placeholder, resolved later
    case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM: {
      // Linux has them only with a wake-up RTC, which shows as a working clock_getres. They
      // would also wake a suspended machine; here they are the plain clocks.
      if (!kernel::HostClockRes(clock)) return Errno(EOPNOTSUPP);
      return TimerClock{TimerClock::kWall,
                        clock == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME : CLOCK_BOOTTIME};
    }
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE:
      return Errno(EOPNOTSUPP);
    default:
      if (clock < 0 && (clock & 3) != 3) return TimerClock{TimerClock::kProcessCpu};
      return Errno(EINVAL);
  }
}

// Linux's good_sigevent. Preconditions: Kernel::mu_ held.
Result<void> CheckSigEvent(Task& t, const SigEvent& ev) {
  switch (ev.notify) {
    case SIGEV_THREAD_ID: {
      kernel::Task* target = t.kernel().TaskByTid(t.ToGlobalPid(ev.tid));
      if (target == nullptr || &target->tg() != &t.tg()) return Errno(EINVAL);
      [[fallthrough]];
    }
    case SIGEV_SIGNAL:
    case SIGEV_THREAD:
      if (ev.signo <= 0 || ev.signo > abi::kNumSignals) return Errno(EINVAL);
      [[fallthrough]];
    case SIGEV_NONE:
      return Ok();
    default:
      return Errno(EINVAL);
  }
}

}  // namespace

Result<uint64_t> SysGetitimer(Task& t, int which, GuestAddr value) {
  if (which < ITIMER_REAL || which > ITIMER_PROF) return Errno(EINVAL);
  TimerSetting cur;
  {
    absl::MutexLock l(&t.kernel().mu());
    cur = Itimer(t, which).Get();
  }
  SENTRY_TRY(t.CopyOut(value, ItimerVal{ToTimeval(cur.interval_ns), ToTimeval(cur.value_ns)}));
  return 0;
}

Result<uint64_t> SysSetitimer(Task& t, int which, GuestAddr value, GuestAddr ovalue) {
  // A null new value disarms (Linux accepts it, with a warning).
  TimerSetting s;
  if (!value.IsNull()) {
    ItimerVal v = SENTRY_TRY(t.CopyIn<ItimerVal>(value));
    s.value_ns = SENTRY_TRY(TimevalNs(v.value));
    s.interval_ns = SENTRY_TRY(TimevalNs(v.interval));
  }
  if (which < ITIMER_REAL || which > ITIMER_PROF) return Errno(EINVAL);
  TimerSetting old;
  {
    absl::MutexLock l(&t.kernel().mu());
    old = Itimer(t, which).Set(s, false);
  }
  if (!ovalue.IsNull()) {
    SENTRY_TRY(t.CopyOut(ovalue, ItimerVal{ToTimeval(old.interval_ns), ToTimeval(old.value_ns)}));
  }
  return 0;
}

Result<uint64_t> SysAlarm(Task& t, uint32_t seconds) {
  TimerSetting old;
  {
    absl::MutexLock l(&t.kernel().mu());
    old = Itimer(t, ITIMER_REAL).Set({int64_t{seconds} * kNsPerSec, 0}, false);
  }
  // Rounded so that a pending alarm never reads as 0 and half seconds count up (Linux's
  // alarm_setitimer).
  int64_t sec = old.value_ns / kNsPerSec;
  int64_t ns = old.value_ns % kNsPerSec;
  if ((sec == 0 && ns != 0) || ns >= kNsPerSec / 2) sec++;
  return static_cast<uint64_t>(sec);
}

Result<uint64_t> SysTimerCreate(Task& t, int clock, GuestAddr sevp, GuestAddr idp) {
  std::optional<SigEvent> ev;
  if (!sevp.IsNull()) ev = SENTRY_TRY(t.CopyIn<SigEvent>(sevp));
  TimerClock c = SENTRY_TRY(TimerCreateClock(clock));
  kernel::Kernel& k = t.kernel();
  std::shared_ptr<KTimer> timer;
  int id;
  {
    absl::MutexLock l(&k.mu());
    // Ids count up per process and are used up even by a create that fails later (Linux).
    kernel::ProcessTimers& timers = t.tg().timers;
    do {
      id = timers.next_posix_id;
      timers.next_posix_id = (timers.next_posix_id + 1) & INT32_MAX;
    } while (timers.posix.count(id));
    if (ev) SENTRY_TRY(CheckSigEvent(t, *ev));
  }
  SENTRY_TRY(t.CopyOut(idp, static_cast<int32_t>(id)));
  absl::MutexLock l(&k.mu());
  if (c.kind != TimerClock::kWall) c = SENTRY_TRY(kernel::ResolveCpuClock(t, clock, true));
  timer = std::make_shared<KTimer>(k, t.tg(), KTimer::Kind::kPosix, c);
  timer->id = id;
  if (ev) {
    timer->notify = ev->notify == SIGEV_THREAD ? SIGEV_SIGNAL : ev->notify;
    timer->signo = ev->signo;
    timer->value = ev->value;
    timer->target_tid = t.ToGlobalPid(ev->tid);  // kept global, as the task table
  } else {
    timer->notify = SIGEV_SIGNAL;
    timer->signo = SIGALRM;
    timer->value = static_cast<uint32_t>(id);
  }
  t.tg().timers.posix[id] = std::move(timer);
  return 0;
}

Result<uint64_t> SysTimerSettime(Task& t, int id, int flags, GuestAddr new_value,
                                 GuestAddr old_value) {
  if (new_value.IsNull()) return Errno(EINVAL);
  ItimerSpec spec = SENTRY_TRY(t.CopyIn<ItimerSpec>(new_value));
  TimerSetting s;
  s.value_ns = SENTRY_TRY(TimespecNs(spec.value));
  s.interval_ns = SENTRY_TRY(TimespecNs(spec.interval));
  TimerSetting old;
  {
    absl::MutexLock l(&t.kernel().mu());
    KTimer* timer = SENTRY_TRY(PosixTimer(t, id));
    old = timer->Set(s, flags & TIMER_ABSTIME);
  }
  if (!old_value.IsNull()) {
    SENTRY_TRY(
        t.CopyOut(old_value, ItimerSpec{ToTimespec(old.interval_ns), ToTimespec(old.value_ns)}));
  }
  return 0;
}

Result<uint64_t> SysTimerGettime(Task& t, int id, GuestAddr value) {
  TimerSetting cur;
  {
    absl::MutexLock l(&t.kernel().mu());
    KTimer* timer = SENTRY_TRY(PosixTimer(t, id));
    cur = timer->Get();
  }
  SENTRY_TRY(t.CopyOut(value, ItimerSpec{ToTimespec(cur.interval_ns), ToTimespec(cur.value_ns)}));
  return 0;
}

Result<uint64_t> SysTimerGetoverrun(Task& t, int id) {
  absl::MutexLock l(&t.kernel().mu());
  KTimer* timer = SENTRY_TRY(PosixTimer(t, id));
  return static_cast<uint64_t>(timer->OverrunLast());
}

Result<uint64_t> SysTimerDelete(Task& t, int id) {
  absl::MutexLock l(&t.kernel().mu());
  KTimer* timer = SENTRY_TRY(PosixTimer(t, id));
  timer->Kill();
  t.tg().timers.posix.erase(id);
  return 0;
}

}  // namespace sentry::syscalls
