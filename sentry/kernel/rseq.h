// Restartable sequences (rseq(2)), with Linux 6.1's rules.
//
// The work is split by who can do it. The host kernel, which schedules the guest thread's
// host thread, keeps the area's cpu_id_start and cpu_id current and moves the thread to the
// abort handler when it preempts or migrates it inside a critical section: the registration
// is made on that host thread (Context::HostRseq). The Sentry keeps the registration's record
// for the syscall's errno rules, fork and execve, and does the kernel's signal-delivery part
// itself, since it, not the host, builds the guest's signal frames.
#pragma once

#include <cstdint>

#include "sentry/base/errno.h"

namespace sentry::kernel {

class Task;

// A thread's registration; addr 0 when none.
struct RseqRegistration {
  uint64_t addr = 0;
  uint32_t len = 0;
  uint32_t sig = 0;
};

// rseq(area, len, flags, sig) for `t`.
Result<void> RseqSyscall(Task& t, uint64_t area, uint32_t len, int flags, uint32_t sig);

// Makes the host side of a forked child's registration, which it inherits from its parent
// as on Linux. Called by the child's own thread before it first runs.
void RseqAfterFork(Task& child);

// What Linux does on signal delivery: a thread inside a critical section of its registered
// area continues at the section's abort handler (so the frame saves the abort address), and
// the area's rseq_cs is cleared. Fails (the caller then kills with SIGSEGV, as Linux's
// force_sigsegv) on a malformed rseq_cs, a bad signature or an unreadable area.
Result<void> RseqOnSignalDelivery(Task& t);

}  // namespace sentry::kernel
