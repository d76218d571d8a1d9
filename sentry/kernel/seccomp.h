// Seccomp for guests: the filters a guest installs with seccomp(2) or prctl(PR_SET_SECCOMP)
// are classic BPF programs the Sentry checks as Linux does and runs on every syscall of the
// thread, before the syscall's handler, with Linux's actions and their precedence.
//
// Not built: user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_RET_USER_NOTIF):
// the guest sees a kernel without it (GET_NOTIF_SIZES fails with EINVAL, GET_ACTION_AVAIL
// says EOPNOTSUPP for USER_NOTIF). SECCOMP_RET_TRACE finds no tracer (guests cannot ptrace)
// and fails the syscall with ENOSYS, as Linux does without a tracer.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sentry/base/errno.h"

namespace sentry::kernel {

class Task;

// One installed filter; the chain is shared by the threads and children that inherit it.
struct SeccompFilter {
  std::vector<sock_filter> prog;  // checked, with Linux's rewrites of the LEN loads
  std::shared_ptr<const SeccompFilter> prev;
  bool log = false;      // SECCOMP_FILTER_FLAG_LOG
  uint32_t path_insns;   // instructions on the chain up to here, as Linux counts them
};

// A thread's seccomp state (guarded by Kernel::mu_; the task's own reads of `mode` are
// atomic so that a syscall without filters costs one load).
struct SeccompState {
  int mode = 0;  // SECCOMP_MODE_DISABLED, _STRICT or _FILTER
  std::shared_ptr<const SeccompFilter> filter;
  int count() const;  // filters on the chain (/proc/PID/status Seccomp_filters)
};

// Checks a classic BPF program as seccomp does (opcodes, jumps, memory slots, a final RET,
// loads within struct seccomp_data) and returns it with LEN loads made immediate.
Result<std::vector<sock_filter>> CheckSeccompProgram(std::vector<sock_filter> prog);

// Runs one checked program over `data` (a struct seccomp_data).
uint32_t RunSeccompProgram(const std::vector<sock_filter>& prog, const uint8_t (&data)[64]);

// What the filters of `t` decide about the syscall in its registers: nullopt to run it, or
// the value the syscall returns without running (the task may be exiting or have a signal
// queued as the action requires).
std::optional<int64_t> SeccompCheckSyscall(Task& t);

// Gives `t`, which has not run yet, the filter `prog` (checked as seccomp(2) would).
Result<void> InstallInitialSeccomp(Task& t, std::vector<sock_filter> prog);

// seccomp(2) and the two prctl options.
Result<uint64_t> SeccompSyscall(Task& t, unsigned op, unsigned flags, uint64_t args);
Result<uint64_t> SeccompPrctlSet(Task& t, uint64_t mode, uint64_t filter);

}  // namespace sentry::kernel
