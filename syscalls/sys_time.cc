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

int64_t NowNs(int clock) {
  struct timespec ts;
  // CPU-time clocks measure the Sentry thread serving this task: a stand-in until per-task
  // accounting exists.
  clock_gettime(clock == CLOCK_PROCESS_CPUTIME_ID ? CLOCK_THREAD_CPUTIME_ID : clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Sleeps until `deadline_ns` on `clock`; interrupted sleeps restart through restart_syscall
// with the same deadline, as Linux's restart_block does.
Result<uint64_t> SleepUntil(Task& t, int clock, int64_t deadline_ns, GuestAddr rem,
                            bool relative) {
  for (;;) {
    int64_t left = deadline_ns - NowNs(clock);
    if (left <= 0) return 0;
    auto r = t.Wait(absl::Now() + absl::Nanoseconds(left));
    if (r.ok() || r.error() == ETIMEDOUT) continue;
    if (relative && !rem.IsNull()) {
      int64_t l = std::max<int64_t>(0, deadline_ns - NowNs(clock));
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

Result<uint64_t> SysClockGettime(Task& t, int clock, GuestAddr tp) {
  if (!ValidClock(clock)) return Errno(EINVAL);
  int64_t ns = NowNs(clock);
  SENTRY_TRY(t.CopyOut(tp, abi::Timespec{ns / 1000000000, ns % 1000000000}));
  return 0;
}

Result<uint64_t> SysClockGetres(Task& t, int clock, GuestAddr tp) {
  if (!ValidClock(clock)) return Errno(EINVAL);
  if (!tp.IsNull()) SENTRY_TRY(t.CopyOut(tp, abi::Timespec{0, 1}));
  return 0;
}

Result<uint64_t> SysGettimeofday(Task& t, GuestAddr tv, GuestAddr tz) {
  int64_t ns = NowNs(CLOCK_REALTIME);
  if (!tv.IsNull()) SENTRY_TRY(t.CopyOut(tv, abi::Timeval{ns / 1000000000, (ns % 1000000000) / 1000}));
  if (!tz.IsNull()) SENTRY_TRY(t.CopyOut(tz, uint64_t{0}));
  return 0;
}

Result<uint64_t> SysTime(Task& t, GuestAddr tloc) {
  int64_t s = NowNs(CLOCK_REALTIME) / 1000000000;
  if (!tloc.IsNull()) SENTRY_TRY(t.CopyOut(tloc, s));
  return static_cast<uint64_t>(s);
}

Result<uint64_t> SysNanosleep(Task& t, GuestAddr req, GuestAddr rem) {
  absl::Duration d = SENTRY_TRY(CopyInDuration(t, req));
  return SleepUntil(t, CLOCK_MONOTONIC, NowNs(CLOCK_MONOTONIC) + absl::ToInt64Nanoseconds(d),
                    rem, true);
}

Result<uint64_t> SysClockNanosleep(Task& t, int clock, int flags, GuestAddr req, GuestAddr rem) {
  if (clock == CLOCK_THREAD_CPUTIME_ID) return Errno(EINVAL);
  if (!ValidClock(clock)) return Errno(EINVAL);
  absl::Duration d = SENTRY_TRY(CopyInDuration(t, req));
  int64_t ns = absl::ToInt64Nanoseconds(d);
  bool abs = flags & TIMER_ABSTIME;
  return SleepUntil(t, clock, abs ? ns : NowNs(clock) + ns, rem, !abs);
}

Result<uint64_t> SysRestartSyscall(Task& t) {
  return SleepUntil(t, t.restart_.clock, t.restart_.deadline_ns, GuestAddr(t.restart_.rem_addr),
                    true);
}

Result<uint64_t> SysTimes(Task& t, GuestAddr buf) {
  struct tms tm{};
  int64_t ticks = NowNs(CLOCK_THREAD_CPUTIME_ID) / 10000000;
  tm.tms_utime = ticks;
  if (!buf.IsNull()) SENTRY_TRY(t.CopyOut(buf, tm));
  return static_cast<uint64_t>(absl::ToInt64Milliseconds(absl::Now() - t.kernel().boot_time) / 10);
}

Result<uint64_t> SysGetrusage(Task& t, int who, GuestAddr buf) {
  if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN && who != RUSAGE_THREAD) return Errno(EINVAL);
  abi::Rusage ru{};
  if (who != RUSAGE_CHILDREN) {
    int64_t ns = NowNs(CLOCK_THREAD_CPUTIME_ID);
    ru.utime = {ns / 1000000000, (ns % 1000000000) / 1000};
  }
  SENTRY_TRY(t.CopyOut(buf, ru));
  return 0;
}

}  // namespace sentry::syscalls
