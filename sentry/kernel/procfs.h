// The proc file system of a kernel (see procfs.cc).
#pragma once

#include <string>

#include "sentry/kernel/kernel.h"
#include "vfs/inode.h"

namespace sentry::kernel {

// A proc file system that shows the processes of PID namespace `ns` (null: the sandbox's)
// with their numbers there, as a proc mounted by a process of that namespace.
vfs::InodeRef NewProcfs(Kernel& k, PidNsRef ns = nullptr);

// The kernel release the sandbox reports (uname, /proc/sys/kernel/osrelease).
std::string OsRelease();

}  // namespace sentry::kernel
