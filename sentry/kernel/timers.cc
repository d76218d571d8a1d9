#include "sentry/kernel/timers.h"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

// Linux's CPU-clock id encoding (include/linux/posix-timers.h).
constexpr int kCpuClockWhichMask = 3;
constexpr int kCpuClockVirt = 1;
constexpr int kCpuClockFd = 3;
constexpr int kCpuClockPerThread = 4;

// What getitimer reports for a CPU itimer that is due but not yet sampled ("about to fire";
// Linux says one tick).
constexpr int64_t kAboutToFireNs = 1000000;

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

bool Live(Task* t) {
  auto& tasks = t->tg().tasks;
  return std::find(tasks.begin(), tasks.end(), t) != tasks.end();
}

}  // namespace

Result<TimerClock> ResolveCpuClock(Task& t, int clock, bool for_timer) {
  Kernel& k = t.kernel();
  if (clock == CLOCK_PROCESS_CPUTIME_ID) return TimerClock{TimerClock::kProcessCpu, 0, t.tg().tgid};
  if (clock == CLOCK_THREAD_CPUTIME_ID) return TimerClock{TimerClock::kThreadCpu, 0, t.tid()};
  if (clock >= 0 || (clock & kCpuClockWhichMask) == kCpuClockFd) return Errno(EINVAL);
  int pid = ~(clock >> 3);
  bool thread = clock & kCpuClockPerThread;
  bool user_only = (clock & kCpuClockWhichMask) == kCpuClockVirt;
  if (pid == 0) {
    return thread ? TimerClock{TimerClock::kThreadCpu, 0, t.tid(), user_only}
                  : TimerClock{TimerClock::kProcessCpu, 0, t.tg().tgid, user_only};
  }
  pid = t.ToGlobalPid(pid);  // the clock names the caller's number; the timer keeps the global
  Task* p = k.TaskByTid(pid);
  if (p == nullptr) return Errno(EINVAL);
  if (thread) {
    if (&p->tg() != &t.tg()) return Errno(EINVAL);
    return TimerClock{TimerClock::kThreadCpu, 0, pid, user_only};
  }
  // clock_gettime takes any thread of the process; a timer wants the process's own id.
  if (for_timer && p->tg().tgid != pid) return Errno(EINVAL);
  return TimerClock{TimerClock::kProcessCpu, 0, p->tg().tgid, user_only};
}

std::optional<int64_t> ReadTimerClock(Kernel& k, const TimerClock& c) {
  CpuTime cpu;
  switch (c.kind) {
    case TimerClock::kWall: {
      struct timespec ts;
      clock_gettime(c.host_clock, &ts);
      return ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    case TimerClock::kProcessCpu: {
      ThreadGroup* g = k.GroupByTgid(c.id);
      if (g == nullptr) return std::nullopt;
      cpu = k.GroupCpuUsage(*g);
      break;
    }
    case TimerClock::kThreadCpu: {
      Task* t = k.TaskByTid(c.id);
      if (t == nullptr || !Live(t)) return std::nullopt;
      cpu = t->CpuUsage();
      break;
    }
  }
  return c.user_only ? cpu.user_ns : cpu.total_ns();
}

std::optional<int64_t> KTimer::Now() { return ReadTimerClock(k_, clock_); }

int64_t KTimer::Forward(int64_t now) {
  if (interval_ns_ <= 0 || now < expires_ns_) return 0;
  int64_t n = (now - expires_ns_) / interval_ns_ + 1;
  int64_t step;
  if (__builtin_mul_overflow(n, interval_ns_, &step)) step = INT64_MAX;
  expires_ns_ = SaturatingAdd(expires_ns_, step);
  return n;
}

int KTimer::OverrunLast() const {
  return static_cast<int>(std::min<int64_t>(overrun_last_, INT32_MAX));
}

void KTimer::Schedule(int64_t now) {
  if (scheduled_) TimerQueue::Global().Cancel(scheduled_);
  scheduled_ = 0;
  generation_++;
  if (tg_ == nullptr || status_ != Status::kArmed) return;
  if (kind_ == Kind::kPosix && notify == SIGEV_NONE) return;  // never fires; Get computes
  absl::Duration delay = absl::Nanoseconds(std::max<int64_t>(expires_ns_ - now, 0));
  if (clock_.kind != TimerClock::kWall) {
    // CPU time cannot advance faster than wall time times the threads that could run.
    int64_t threads = 1;
    if (clock_.kind == TimerClock::kProcessCpu) {
      if (ThreadGroup* g = k_.GroupByTgid(clock_.id)) {
        threads = std::max<int64_t>(1, static_cast<int64_t>(g->tasks.size()));
      }
    }
    delay = std::clamp(delay / threads, kCpuSampleMin, kCpuSampleMax);
  }
  std::weak_ptr<KTimer> weak = weak_from_this();
  uint64_t gen = generation_;
  scheduled_ = TimerQueue::Global().Schedule(absl::Now() + delay, [weak, gen] {
    if (auto timer = weak.lock()) timer->Fire(gen);
  });
}

void KTimer::Fire(uint64_t gen) {
  // A killed timer's callback does not touch the kernel, which may be going away once every
  // process is gone.
  if (killed_.load(std::memory_order_acquire)) return;
  absl::MutexLock l(&k_.mu());
  if (gen != generation_ || tg_ == nullptr) return;
  scheduled_ = 0;
  if (status_ != Status::kArmed) return;
  std::optional<int64_t> now = Now();
  if (!now) {
    status_ = Status::kDisarmed;  // its thread or process is gone
    return;
  }
  if (*now < expires_ns_) {
    Schedule(*now);
    return;
  }
  Expire(*now);
}

void KTimer::Expire(int64_t now) {
  abi::SigInfo info{};
  info.code = abi::kSI_KERNEL;
  switch (kind_) {
    case Kind::kItimerReal:
      // Re-armed when SIGALRM is taken (SignalTaken), as Linux's dequeue_signal does.
      status_ = Status::kDisarmed;
      info.signo = SIGALRM;
      k_.SendGroupSignal(*tg_, info);
      return;
    case Kind::kItimerVirtual:
    case Kind::kItimerProf:
      // As Linux's check_cpu_itimer: one interval on, however late the sample.
      if (interval_ns_ > 0) {
        expires_ns_ = SaturatingAdd(expires_ns_, interval_ns_);
      } else {
        status_ = Status::kDisarmed;
      }
      info.signo = kind_ == Kind::kItimerVirtual ? SIGVTALRM : SIGPROF;
      k_.SendGroupSignal(*tg_, info);
      Schedule(now);
      return;
    case Kind::kRlimitCpu:
      ExpireRlimitCpu(now);
      return;
    case Kind::kPosix:
      break;
  }
  status_ = interval_ns_ > 0 ? Status::kRequeuePending : Status::kDisarmed;
  if (SendPosixSignal() || interval_ns_ == 0) return;
  // Its thread is gone: like Linux, the timer waits for a signal that will never be taken.
  if (notify == SIGEV_THREAD_ID && TargetThread() == nullptr) return;
  // Ignored. Linux parks an ignored periodic timer until the signal is unignored; here it
  // keeps running, at most once a millisecond.
  overrun_ += Forward(now + std::max<int64_t>(0, 1000000 - interval_ns_));
  status_ = Status::kArmed;
  Schedule(now);
}

namespace {

constexpr int64_t kNsPerSec = 1000000000;

// An RLIMIT_CPU value (seconds) in ns; an infinite or too large one never comes.
int64_t LimitNs(uint64_t seconds) {
  return seconds >= static_cast<uint64_t>(INT64_MAX / kNsPerSec) ? INT64_MAX : seconds * kNsPerSec;
}

}  // namespace

void KTimer::ExpireRlimitCpu(int64_t now) {
  // As Linux's check_process_timers: the hard limit first, then the soft one.
  abi::Rlimit& lim = tg_->rlimits[RLIMIT_CPU];
  status_ = Status::kDisarmed;
  if (lim.cur == RLIM_INFINITY) return;
  abi::SigInfo info{};
  info.code = abi::kSI_KERNEL;
  if (lim.max != RLIM_INFINITY && now >= LimitNs(lim.max)) {
    info.signo = SIGKILL;
    k_.SendGroupSignal(*tg_, info);
    return;
  }
  if (now >= LimitNs(lim.cur)) {
    info.signo = SIGXCPU;
    k_.SendGroupSignal(*tg_, info);
    lim.cur++;
  }
  expires_ns_ = LimitNs(lim.cur);
  status_ = Status::kArmed;
  Schedule(now);
}

void ProcessTimers::UpdateRlimitCpu(Kernel& k, ThreadGroup& tg) {
  uint64_t soft = tg.rlimits[RLIMIT_CPU].cur;
  if (soft == RLIM_INFINITY) {
    if (rlimit_cpu) rlimit_cpu->Set({}, false);
    return;
  }
  if (!rlimit_cpu) {
    TimerClock clock{TimerClock::kProcessCpu, 0, tg.tgid};
    rlimit_cpu = std::make_shared<KTimer>(k, tg, KTimer::Kind::kRlimitCpu, clock);
  }
  // Absolute on the process's clock; 0 s (already due) is 1 ns, as Set takes 0 as "disarm".
  rlimit_cpu->Set({std::max<int64_t>(LimitNs(soft), 1), 0}, /*abs=*/true);
}

Task* KTimer::TargetThread() {
  Task* target = k_.TaskByTid(target_tid);
  return target != nullptr && &target->tg() == tg_ && Live(target) ? target : nullptr;
}

abi::SigInfo* KTimer::QueuedSignal() {
  PendingSignals* q = &tg_->pending;
  if (notify == SIGEV_THREAD_ID) {
    Task* target = TargetThread();
    if (target == nullptr) return nullptr;
    q = &target->pending_;
  }
  for (abi::SigInfo& e : q->queue) {
    if (e.pad0 == abi::kSigInfoTimerMark && e.f.timer.tid == id) return &e;
  }
  return nullptr;
}

bool KTimer::SendPosixSignal() {
  Task* target = nullptr;
  if (notify == SIGEV_THREAD_ID) {
    target = TargetThread();
    if (target == nullptr) return false;
  }
  // Already queued: no second signal; it now stands for this arming.
  if (abi::SigInfo* queued = QueuedSignal()) {
    queued->f.timer.sys_private = signal_seq_;
    return true;
  }
  abi::SigInfo info{};
  info.signo = signo;
  info.code = abi::kSI_TIMER;
  info.pad0 = abi::kSigInfoTimerMark;
  info.f.timer.tid = id;
  info.f.timer.value = value;
  info.f.timer.sys_private = signal_seq_;
  return target ? k_.SendTaskSignal(*target, info) : k_.SendGroupSignal(*tg_, info);
}

bool KTimer::SignalTaken(abi::SigInfo& info) {
  if (kind_ == Kind::kItimerReal) {
    if (tg_ == nullptr || status_ == Status::kArmed || interval_ns_ == 0) return true;
    if (std::optional<int64_t> now = Now()) {
      Forward(*now);
      status_ = Status::kArmed;
      Schedule(*now);
    }
    return true;
  }
  if (tg_ == nullptr || info.f.timer.sys_private != signal_seq_) return false;
  info.pad0 = 0;
  info.f.timer.sys_private = 0;
  if (interval_ns_ == 0 || status_ != Status::kRequeuePending) return true;
  std::optional<int64_t> now = Now();
  if (!now) return true;
  overrun_ += Forward(*now);
  status_ = Status::kArmed;
  Schedule(*now);
  overrun_last_ = overrun_;
  overrun_ = -1;
  signal_seq_++;
  info.f.timer.overrun = OverrunLast();
  return true;
}

TimerSetting KTimer::Get() {
  TimerSetting out;
  out.interval_ns = interval_ns_;
  if (tg_ == nullptr || status_ == Status::kDisarmed) return out;
  std::optional<int64_t> now = Now();
  if (!now) return out;
  bool none = kind_ == Kind::kPosix && notify == SIGEV_NONE;
  if (kind_ == Kind::kPosix && interval_ns_ > 0 && (status_ != Status::kArmed || none)) {
    overrun_ += Forward(*now);
  }
  int64_t rem = expires_ns_ - *now;
  switch (kind_) {
    case Kind::kItimerReal:
      if (status_ == Status::kArmed) out.value_ns = std::max<int64_t>(rem, 1000);
      break;
    case Kind::kItimerVirtual:
    case Kind::kItimerProf:
      out.value_ns = rem > 0 ? rem : kAboutToFireNs;
      break;
    case Kind::kRlimitCpu:
      out.value_ns = rem;
      break;
    case Kind::kPosix:
      // A signal not yet delivered reads as 1 ns left; an expired SIGEV_NONE timer as 0.
      out.value_ns = rem > 0 ? rem : (none ? 0 : 1);
      break;
  }
  return out;
}

TimerSetting KTimer::Set(const TimerSetting& s, bool abs) {
  TimerSetting old = Get();
  if (kind_ == Kind::kPosix) {
    signal_seq_++;  // a queued signal of the old arming is dropped
    overrun_last_ = 0;
    overrun_ = -1;
  }
  status_ = Status::kDisarmed;
  // CPU itimers keep the interval given with a zero value (Linux's set_cpu_itimer).
  bool cpu_itimer = kind_ == Kind::kItimerVirtual || kind_ == Kind::kItimerProf;
  interval_ns_ = s.value_ns != 0 || cpu_itimer ? s.interval_ns : 0;
  std::optional<int64_t> now = Now();
  if (s.value_ns != 0 && now) {
    expires_ns_ = abs ? s.value_ns : SaturatingAdd(*now, s.value_ns);
    status_ = Status::kArmed;
  }
  Schedule(now.value_or(0));
  return old;
}

void KTimer::RestartIfSignalLost() {
  if (tg_ == nullptr || status_ != Status::kRequeuePending || QueuedSignal() != nullptr) return;
  std::optional<int64_t> now = Now();
  if (!now) return;
  overrun_ += Forward(*now);
  status_ = Status::kArmed;
  Schedule(*now);
}

void KTimer::Kill() {
  if (scheduled_) TimerQueue::Global().Cancel(scheduled_);
  scheduled_ = 0;
  generation_++;
  status_ = Status::kDisarmed;
  tg_ = nullptr;
  killed_.store(true, std::memory_order_release);
}

void ProcessTimers::KillPosix() {
  for (auto& [id, timer] : posix) timer->Kill();
  posix.clear();
}

void ProcessTimers::SignalsDiscarded() {
  for (auto& [id, timer] : posix) timer->RestartIfSignalLost();
}

void ProcessTimers::KillAll() {
  KillPosix();
  if (rlimit_cpu) rlimit_cpu->Kill();
  rlimit_cpu.reset();
  for (auto& timer : itimers) {
    if (timer) timer->Kill();
    timer.reset();
  }
}

namespace {

constexpr int kFixedClocks = CLOCK_TAI + 1;
constexpr int kCpuClockKinds = 8;  // Linux's encoding: the low 3 bits

struct ClockResTable {
  std::optional<struct timespec> fixed[kFixedClocks];
  std::optional<struct timespec> cpu[kCpuClockKinds];
};

ClockResTable CaptureClockRes() {
  ClockResTable t;
  struct timespec res;
  for (int c = 0; c < kFixedClocks; c++) {
    if (clock_getres(c, &res) == 0) t.fixed[c] = res;
  }
  // The Sentry's own process clocks (pid 0 means "the caller"): ~pid << 3 | kind.
  for (int kind = 0; kind < kCpuClockKinds; kind++) {
    if (clock_getres(static_cast<clockid_t>(~0u << 3) | kind, &res) == 0) t.cpu[kind] = res;
  }
  return t;
}

}  // namespace

std::optional<struct timespec> HostClockRes(int clock) {
  static const ClockResTable table = CaptureClockRes();
  if (clock >= 0) return clock < kFixedClocks ? table.fixed[clock] : std::nullopt;
  return table.cpu[clock & (kCpuClockKinds - 1)];
}

}  // namespace sentry::kernel
