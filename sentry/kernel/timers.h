// Interval timers of a process: the three of setitimer/alarm and the POSIX timers of
// timer_create, as Linux keeps them in its signal_struct.
//
// Lifetime, as Linux: a process's timers belong to its ThreadGroup. fork starts with none;
// execve keeps the itimers and deletes the POSIX timers; the last thread's exit stops them all.
//
// Clocks. Wall clocks (REALTIME, MONOTONIC, BOOTTIME, TAI) are host clocks, and an armed timer
// has one TimerQueue callback at its expiry. CPU clocks are the guest's accounted time
// (cputime.h), which the host cannot notify us about: an armed CPU timer samples its clock on
// the TimerQueue, at the earliest moment it could have expired (what is left divided by the
// threads that could be running), but at least every kCpuSampleMin and at most every
// kCpuSampleMax of wall time. So CPU timers fire up to a millisecond or so late; Linux's fire
// at the next scheduler tick, which is as coarse. Nothing is sampled while no timer is armed,
// and the syscall path is never involved.
//
// Signals, as Linux:
//  - ITIMER_REAL sends SIGALRM (SI_KERNEL) to the process; a periodic one is re-armed when
//    SIGALRM is taken from the process's queue (Kernel::DequeueSignal), not when it fires.
//  - ITIMER_VIRTUAL/PROF send SIGVTALRM/SIGPROF and re-arm at once.
//  - RLIMIT_CPU: at the soft limit of the process's CPU time (user + system) SIGXCPU
//    (SI_KERNEL), and the soft limit moves up a second, so that it comes again every second;
//    at the hard limit SIGKILL. Like Linux, nothing happens while the soft limit is infinite.
//  - A POSIX timer sends its sigevent's signal (SI_TIMER, si_timerid, si_value) to the process
//    or to one thread (SIGEV_THREAD_ID). A periodic one stops until its signal is taken; then
//    it is moved past now and the expirations it missed become si_overrun and what
//    timer_getoverrun returns. While its signal is queued it queues no second one. A signal
//    queued before the timer was re-set or deleted is dropped when it would be taken.
//
// All timer state is guarded by Kernel::mu_ (it is signal state); TimerQueue::mu_ is a leaf
// under it. A TimerQueue callback holds its timer weakly and checks the timer's generation
// under Kernel::mu_, so that cancelling never needs to wait for a callback.
#pragma once

#include <time.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "absl/time/time.h"
#include "sentry/abi/linux.h"
#include "sentry/base/errno.h"
#include "sentry/base/timer_queue.h"

namespace sentry::kernel {

class Kernel;
class Task;
class ThreadGroup;

inline constexpr absl::Duration kCpuSampleMin = absl::Milliseconds(1);
inline constexpr absl::Duration kCpuSampleMax = absl::Milliseconds(50);

// What a timer counts.
struct TimerClock {
  enum Kind { kWall, kProcessCpu, kThreadCpu };
  Kind kind = kWall;
  int host_clock = 0;      // kWall: the host clock id
  int id = 0;              // kProcessCpu: the tgid; kThreadCpu: the tid
  bool user_only = false;  // CPU clocks: user time only (ITIMER_VIRTUAL, CPUCLOCK_VIRT)
};

// The host's clock_getres for clock `clock`: a fixed clock id (CLOCK_REALTIME ... CLOCK_TAI)
// or an encoded CPU clock of the Sentry's own process (the same kind of clock of any process
// has the same resolution). nullopt where the host has no such clock. Captured once, at the
// first call (the Kernel's constructor makes it, before the Sentry's allowlist goes on:
// clock_getres is not on it).
std::optional<struct timespec> HostClockRes(int clock);

// Resolves a clock id that names a CPU clock (CLOCK_PROCESS_CPUTIME_ID,
// CLOCK_THREAD_CPUTIME_ID, or one of clock_getcpuclockid's encoded ids) for caller `t`, as
// Linux's lookup_task: EINVAL for a thread outside the caller's process, a pid that does not
// exist, or (when `for_timer`) a process clock named by a non-leader tid.
// Preconditions: Kernel::mu_ held.
Result<TimerClock> ResolveCpuClock(Task& t, int clock, bool for_timer);
// Now on `c`, in ns. A CPU clock whose process or thread is gone reads nullopt.
// Preconditions: Kernel::mu_ held.
std::optional<int64_t> ReadTimerClock(Kernel& k, const TimerClock& c);

struct TimerSetting {
  int64_t value_ns = 0;  // relative; 0 = disarmed
  int64_t interval_ns = 0;
};

class KTimer : public std::enable_shared_from_this<KTimer> {
 public:
  enum class Kind { kItimerReal, kItimerVirtual, kItimerProf, kPosix, kRlimitCpu };
  enum class Status { kDisarmed, kArmed, kRequeuePending };

  KTimer(Kernel& k, ThreadGroup& tg, Kind kind, TimerClock clock)
      : k_(k), tg_(&tg), kind_(kind), clock_(clock) {}

  // All below: Preconditions: Kernel::mu_ held.

  // Arms (value_ns > 0) or disarms; `abs` makes value_ns absolute on the timer's clock.
  // Returns the old setting.
  TimerSetting Set(const TimerSetting& s, bool abs);
  TimerSetting Get();
  // Disarms for good (timer_delete, execve, exit): pending callbacks become no-ops.
  void Kill();
  // The timer's signal (from its queue) is being taken. For POSIX timers, returns false when
  // the signal is stale and must be dropped; fills si_overrun.
  bool SignalTaken(abi::SigInfo& info);
  // A periodic timer waiting for its signal to be taken restarts if the signal was discarded
  // (SIG_IGN set while it was queued), as an ignored one does.
  void RestartIfSignalLost();

  // POSIX timer fields, set once by timer_create.
  int id = 0;
  int notify = 0;  // SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID
  int signo = 0;
  uint64_t value = 0;
  int target_tid = 0;  // SIGEV_THREAD_ID
  int OverrunLast() const;

 private:
  void Schedule(int64_t now);
  void Fire(uint64_t generation);
  void Expire(int64_t now);
  bool SendPosixSignal();
  void ExpireRlimitCpu(int64_t now);
  // The SIGEV_THREAD_ID thread if it is still one of the process's; the timer's queued
  // signal, if any.
  Task* TargetThread();
  abi::SigInfo* QueuedSignal();
  // Moves the expiry past `now` by whole intervals; returns how many.
  int64_t Forward(int64_t now);
  std::optional<int64_t> Now();

  Kernel& k_;
  ThreadGroup* tg_;  // null once killed
  std::atomic<bool> killed_ = false;  // also read without Kernel::mu_, by Fire
  const Kind kind_;
  const TimerClock clock_;
  Status status_ = Status::kDisarmed;
  int64_t expires_ns_ = 0;  // absolute on clock_
  int64_t interval_ns_ = 0;
  uint64_t generation_ = 0;  // bumped whenever a scheduled callback is made stale
  TimerQueue::Id scheduled_ = 0;
  int64_t overrun_ = -1;      // Linux's it_overrun: counts up from -1 until the signal is taken
  int64_t overrun_last_ = 0;  // what timer_getoverrun returns
  int32_t signal_seq_ = 0;    // which arming a queued signal belongs to
};

// A process's timers. Guarded by Kernel::mu_.
struct ProcessTimers {
  // ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF; made on first use.
  std::array<std::shared_ptr<KTimer>, 3> itimers;
  std::map<int, std::shared_ptr<KTimer>> posix;
  int next_posix_id = 0;
  std::shared_ptr<KTimer> rlimit_cpu;  // RLIMIT_CPU's, while the soft limit is finite

  // (Re)arms RLIMIT_CPU's timer of `tg` from its limits: after setrlimit, and for a new
  // process (fork, init), whose CPU time starts at zero. Preconditions: Kernel::mu_ held.
  void UpdateRlimitCpu(Kernel& k, ThreadGroup& tg);

  // Kills the POSIX timers (execve), or all timers (exit).
  void KillPosix();
  void KillAll();
  // Queued signals were discarded: see KTimer::RestartIfSignalLost.
  void SignalsDiscarded();
};

}  // namespace sentry::kernel
