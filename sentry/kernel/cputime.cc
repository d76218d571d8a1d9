#include "sentry/kernel/cputime.h"

#include <time.h>
#include <unistd.h>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

// Linux's CPU-clock ids (include/linux/posix-timers.h), which glibc only builds for SCHED.
constexpr int kCpuClockProf = 0;   // user + system, tick-sampled
constexpr int kCpuClockVirt = 1;   // user, tick-sampled
constexpr int kCpuClockSched = 2;  // exact runtime
constexpr int kCpuClockPerThread = 4;

clockid_t ProcessCpuClock(int pid, int which) {
  return static_cast<clockid_t>((~static_cast<uint32_t>(pid) << 3) | static_cast<uint32_t>(which));
}

int64_t ReadNs(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;  // the process or thread is gone
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

CpuTime HostProcessesCpuTime(std::span<const int> pids) {
  CpuTime sum;
  for (int pid : pids) {
    if (pid <= 0) continue;
    int64_t runtime = ReadNs(ProcessCpuClock(pid, kCpuClockSched));
    int64_t prof = ReadNs(ProcessCpuClock(pid, kCpuClockProf));
    int64_t user = ReadNs(ProcessCpuClock(pid, kCpuClockVirt));
    int64_t sys = prof - user;
    // cputime_adjust: the sampled split scaled to the exact runtime; with no sampled system
    // time it is all user time.
    int64_t sys_scaled = sys <= 0 || prof <= 0
                             ? 0
                             : static_cast<int64_t>(static_cast<__int128>(runtime) * sys / prof);
    sum += CpuTime{runtime - sys_scaled, sys_scaled};
  }
  return sum;
}

CpuTime SentryThreadCpuTime(int tid) {
  if (tid <= 0) return {};
  return CpuTime{0, ReadNs(ProcessCpuClock(tid, kCpuClockSched | kCpuClockPerThread))};
}

int CurrentHostTid() { return static_cast<int>(gettid()); }

CpuTime Task::CpuUsage() {
  return cpu_retired_ + HostProcessesCpuTime(cpu_pids_) + SentryThreadCpuTime(host_thread_tid_);
}

void Task::AdoptContextCpu() {
  std::vector<int> pids = ctx_ ? ctx_->cpu_pids() : std::vector<int>{};
  absl::MutexLock l(&k_.mu());
  cpu_pids_ = std::move(pids);
}

void Task::RetireContextCpu() {
  absl::MutexLock l(&k_.mu());
  cpu_retired_ += HostProcessesCpuTime(cpu_pids_);
  cpu_pids_.clear();
}

void Task::BindHostThread() {
  absl::MutexLock l(&k_.mu());
  host_thread_tid_ = CurrentHostTid();
}

CpuTime Kernel::GroupCpuUsage(ThreadGroup& tg) {
  CpuTime sum = tg.cpu_exited;
  for (Task* t : tg.tasks) sum += t->CpuUsage();
  return sum;
}

abi::Rusage ToRusage(const CpuTime& cpu) {
  abi::Rusage ru{};
  ru.utime = {cpu.user_ns / 1000000000, (cpu.user_ns % 1000000000) / 1000};
  ru.stime = {cpu.sys_ns / 1000000000, (cpu.sys_ns % 1000000000) / 1000};
  return ru;
}

}  // namespace sentry::kernel
