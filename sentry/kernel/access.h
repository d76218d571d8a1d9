// Who may reach into another process or lock memory: the privilege checks of pidfd_getfd,
// process_vm_readv/writev, kcmp and mlock, kept in one place.
//
// Capabilities are not modelled here yet: "privileged" means effective uid 0, which in the
// sandbox's single user namespace holds every capability. When capabilities arrive, only these
// functions change.
#pragma once

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

// Linux's ptrace_may_access(target, PTRACE_MODE_REALCREDS) for ATTACH and READ alike: the
// caller's own process always; otherwise the caller's real uid and gid must equal the target's
// real, effective and saved ids, or the caller must hold CAP_SYS_PTRACE. (Linux also refuses a
// non-dumpable target; the Sentry does not track dumpability, so that case is allowed.)
// Preconditions: Kernel::mu_ held.
bool MayPtrace(const ThreadGroup& caller, const ThreadGroup& target);

// Linux's check_kill_permission for a signal from `caller` to `target`: the caller's real or
// effective uid is the target's real or saved uid, or SIGCONT within the session, or CAP_KILL.
// Preconditions: Kernel::mu_ held.
bool MayKill(const ThreadGroup& caller, const ThreadGroup& target, int sig);

// CAP_IPC_LOCK: locking memory past RLIMIT_MEMLOCK. Preconditions: Kernel::mu_ held.
bool MayLockUnlimited(const ThreadGroup& tg);

// CAP_SYSLOG: reading or controlling the kernel log (dmesg_restrict=1 semantics).
// Preconditions: Kernel::mu_ held.
bool MayUseSyslog(const ThreadGroup& tg);

}  // namespace sentry::kernel
