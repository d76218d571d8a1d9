// Clocks and sleeping.
#include <asm/unistd.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <time.h>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

bool ValidClock(int clock) {
  switch (clock) {
    case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID: case CLOCK_MONOTONIC_RAW: case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME: case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM: case CLOCK_TAI:
      return true;
    default:
      return false;
  }
}

// The CPU-time clocks are the guest's accounted time (sentry/kernel/cputime.h), not the
// host's clocks of the calling Sentry thread.
int64_t NowNs(Task& t, int clock) {
  if (clock == CLOCK_PROCESS_CPUTIME_ID || clock == CLOCK_THREAD_CPUTIME_ID) {
    absl::MutexLock l(&t.kernel().mu());
    kernel::CpuTime cpu =
        clock == CLOCK_PROCESS_CPUTIME_ID ? t.kernel().GroupCpuUsage(t.tg()) : t.CpuUsage();
    return cpu.total_ns();
  }
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// clock_t ticks, at the USER_HZ of 100 that AT_CLKTCK announces.
int64_t Ticks(int64_t ns) { return ns / 10000000; }

// Sleeps until `deadline_ns` on `clock`; interrupted sleeps restart through restart_syscall
// with the same deadline, as Linux's restart_block does.
Result<uint64_t> SleepUntil(Task& t, int clock, int64_t deadline_ns, GuestAddr rem,
                            bool relative) {
  for (;;) {
    int64_t left = deadline_ns - NowNs(t, clock);
    if (left <= 0) return 0;
    auto r = t.Wait(absl::Now() + absl::Nanoseconds(left));
    if (r.ok() || r.error() == ETIMEDOUT) continue;
    if (relative && !rem.IsNull()) {
      int64_t l = std::max<int64_t>(0, deadline_ns - NowNs(t, clock));
      abi::Timespec ts{l / 1000000000, l % 1000000000};
      SENTRY_TRY(t.CopyOut(rem, ts));
    }
    t.restart_ = {clock, deadline_ns, rem.value()};
    return relative ? Errno(kERESTART_RESTARTBLOCK) : Errno(kERESTARTNOHAND);
  }
}

}  // namespace

Result<absl::Duration> CopyInDuration(Task& t, GuestAddr addr) {
  auto ts = SENTRY_TRY(t.CopyIn<abi::Timespec>(addr));
  if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000) return Errno(EINVAL);
  return absl::Seconds(ts.sec) + absl::Nanoseconds(ts.nsec);
}

// The sandbox never sets the host's clock, and has no clock of its own to set: the checks
// Linux makes come first, then the refusal a caller without CAP_SYS_TIME gets.
Result<uint64_t> SysClockSettime(Task& t, int clock, GuestAddr tp) {
  auto ts = SENTRY_TRY(t.CopyIn<abi::Timespec>(tp));
  if (clock != CLOCK_REALTIME) return Errno(EINVAL);
  if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= 1000000000) return Errno(EINVAL);
  return Errno(EPERM);
}

Result<uint64_t> SysSettimeofday(Task& t, GuestAddr tv, GuestAddr tz) {
  if (!tv.IsNull()) {
    struct {
      int64_t sec, usec;
    } v = SENTRY_TRY(t.CopyIn<decltype(v)>(tv));
    if (v.sec < 0 || v.usec < 0 || v.usec >= 1000000) return Errno(EINVAL);
  }
  if (!tz.IsNull()) {
    struct {
      int32_t minuteswest, dsttime;
    } z = SENTRY_TRY(t.CopyIn<decltype(z)>(tz));
    if (z.minuteswest < -15 * 60 || z.minuteswest > 15 * 60) return Errno(EINVAL);
  }
  return Errno(EPERM);
}

Result<uint64_t> SysClockGettime(Task& t, int clock, GuestAddr tp) {
  int64_t ns;
  if (clock < 0) {
    // clock_getcpuclockid / pthread_getcpuclockid ids.
    absl::MutexLock l(&t.kernel().mu());
    kernel::TimerClock c = SENTRY_TRY(kernel::ResolveCpuClock(t, clock, false));
    ns = kernel::ReadTimerClock(t.kernel(), c).value_or(0);
  } else {
    if (!ValidClock(clock)) return Errno(EINVAL);
    ns = NowNs(t, clock);
  }
  SENTRY_TRY(t.CopyOut(tp, abi::Timespec{ns / 1000000000, ns % 1000000000}));
  return 0;
}

// The host's resolutions (the coarse clocks' is the host's tick). An encoded CPU clock has
// the resolution of the same kind of clock of the Sentry's own process.
Result<uint64_t> SysClockGetres(Task& t, int clock, GuestAddr tp) {
  int host_clock = clock;
  if (clock < 0) {
    absl::MutexLock l(&t.kernel().mu());
    SENTRY_TRY(kernel::ResolveCpuClock(t, clock, false));
    host_clock = static_cast<int>(~0u << 3) | (clock & 7);
  } else if (!ValidClock(clock)) {
    return Errno(EINVAL);
  }
  std::optional<struct timespec> res = kernel::HostClockRes(host_clock);
  if (!res) return Errno(EINVAL);
  if (!tp.IsNull()) SENTRY_TRY(t.CopyOut(tp, abi::Timespec{res->tv_sec, res->tv_nsec}));
  return 0;
}

Result<uint64_t> SysGettimeofday(Task& t, GuestAddr tv, GuestAddr tz) {
  int64_t ns = NowNs(t, CLOCK_REALTIME);
  if (!tv.IsNull()) SENTRY_TRY(t.CopyOut(tv, abi::Timeval{ns / 1000000000, (ns % 1000000000) / 1000}));
  if (!tz.IsNull()) SENTRY_TRY(t.CopyOut(tz, uint64_t{0}));
  return 0;
}

Result<uint64_t> SysTime(Task& t, GuestAddr tloc) {
  int64_t s = NowNs(t, CLOCK_REALTIME) / 1000000000;
  if (!tloc.IsNull()) SENTRY_TRY(t.CopyOut(tloc, s));
  return static_cast<uint64_t>(s);
}

Result<uint64_t> SysNanosleep(Task& t, GuestAddr req, GuestAddr rem) {
  absl::Duration d = SENTRY_TRY(CopyInDuration(t, req));
  int64_t deadline = NowNs(t, CLOCK_MONOTONIC) + absl::ToInt64Nanoseconds(d);
  return SleepUntil(t, CLOCK_MONOTONIC, deadline, rem, true);
}

Result<uint64_t> SysClockNanosleep(Task& t, int clock, int flags, GuestAddr req, GuestAddr rem) {
  if (clock == CLOCK_THREAD_CPUTIME_ID) return Errno(EINVAL);
  if (!ValidClock(clock)) return Errno(EINVAL);
  absl::Duration d = SENTRY_TRY(CopyInDuration(t, req));
  int64_t ns = absl::ToInt64Nanoseconds(d);
  bool abs = flags & TIMER_ABSTIME;
  return SleepUntil(t, clock, abs ? ns : NowNs(t, clock) + ns, rem, !abs);
}

Result<uint64_t> SysRestartSyscall(Task& t) {
  return SleepUntil(t, t.restart_.clock, t.restart_.deadline_ns, GuestAddr(t.restart_.rem_addr),
                    true);
}

Result<uint64_t> SysTimes(Task& t, GuestAddr buf) {
  if (!buf.IsNull()) {
    struct tms tm {};
    {
      absl::MutexLock l(&t.kernel().mu());
      kernel::CpuTime self = t.kernel().GroupCpuUsage(t.tg());
      const kernel::CpuTime& children = t.tg().cpu_children;
      tm.tms_utime = Ticks(self.user_ns);
      tm.tms_stime = Ticks(self.sys_ns);
      tm.tms_cutime = Ticks(children.user_ns);
      tm.tms_cstime = Ticks(children.sys_ns);
    }
    SENTRY_TRY(t.CopyOut(buf, tm));
  }
  return static_cast<uint64_t>(absl::ToInt64Milliseconds(absl::Now() - t.kernel().boot_time) / 10);
}

Result<uint64_t> SysGetrusage(Task& t, int who, GuestAddr buf) {
  if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN && who != RUSAGE_THREAD) return Errno(EINVAL);
  kernel::CpuTime cpu;
  {
    absl::MutexLock l(&t.kernel().mu());
    cpu = who == RUSAGE_SELF       ? t.kernel().GroupCpuUsage(t.tg())
          : who == RUSAGE_CHILDREN ? t.tg().cpu_children
                                   : t.CpuUsage();
  }
  SENTRY_TRY(t.CopyOut(buf, kernel::ToRusage(cpu)));
  return 0;
}

}  // namespace sentry::syscalls
