// The machine-wide part of /proc: loadavg, uptime, stat, meminfo, ..., and /proc/sys.
#pragma once

#include "sentry/kernel/kernel.h"
#include "vfs/synthetic.h"

namespace sentry::kernel {

// Adds the machine-wide files and /proc/sys to the root of a /proc whose inodes live in `sb`.
void AddProcSystemFiles(Kernel& k, const vfs::MemSuperRef& sb, vfs::SyntheticDir& root);

// The whole sandbox's CPU time so far: every live process's and what their reaped
// descendants used. Preconditions: Kernel::mu_ held.
CpuTime SandboxCpuTime(Kernel& k);

}  // namespace sentry::kernel
