// The proc file system of a kernel (see procfs.cc).
#pragma once

#include <string>

#include "sentry/kernel/kernel.h"
#include "vfs/inode.h"

namespace sentry::kernel {

vfs::InodeRef NewProcfs(Kernel& k);

// The kernel release the sandbox reports (uname, /proc/sys/kernel/osrelease).
std::string OsRelease();

}  // namespace sentry::kernel
