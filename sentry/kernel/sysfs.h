// A minimal, read-only /sys (see sysfs.cc).
#pragma once

#include "sentry/kernel/kernel.h"
#include "vfs/inode.h"

namespace sentry::kernel {

vfs::InodeRef NewSysfs(Kernel& k);

}  // namespace sentry::kernel
