// CPU time accounting: what getrusage, times, wait4/waitid and the CPU-time clocks report.
//
// A guest thread's own (user mode) work runs in its stub processes, and the host kernel
// accounts it to them; the Sentry's work on its behalf runs on the task's host thread, and
// counts as the guest's system time, as a syscall's would on Linux. Both are host clocks read
// on demand (at getrusage, times, a CPU-clock read, and once when a stub or task goes away),
// never per syscall.
#pragma once

#include <cstdint>
#include <span>

#include "sentry/abi/linux.h"

namespace sentry::kernel {

struct CpuTime {
  int64_t user_ns = 0;
  int64_t sys_ns = 0;

  int64_t total_ns() const { return user_ns + sys_ns; }
  CpuTime& operator+=(const CpuTime& o) {
    user_ns += o.user_ns;
    sys_ns += o.sys_ns;
    return *this;
  }
  friend CpuTime operator+(CpuTime a, const CpuTime& b) { return a += b; }
};

// The CPU time of host processes `pids` (stubs: each is a whole host process). The total is
// the scheduler's exact runtime; it is split into user and system in the proportion of the
// tick-sampled user/system times, as Linux's cputime_adjust does. A process that is gone
// counts as zero.
CpuTime HostProcessesCpuTime(std::span<const int> pids);

// The CPU time of host thread `tid` of the Sentry itself (0 if it is gone), all of it system
// time from the guest's point of view.
CpuTime SentryThreadCpuTime(int tid);

// The calling thread's host tid.
int CurrentHostTid();

// Linux's struct rusage fields for `cpu` (the rest zero).
abi::Rusage ToRusage(const CpuTime& cpu);

}  // namespace sentry::kernel
